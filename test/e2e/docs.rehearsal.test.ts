/**
 * README's rehearsal, run as written (issue 54): its one shell block, from the pack-and-install
 * step on, in a temporary folder, by bash, its commands as a user types them (`npm pack` with its
 * prepack build included). Three things differ from a person's shell, each said where it is done:
 * `CLONE` is a copy of this checkout's files (tracked and untracked, not ignored: the working
 * tree as it is) whose `node_modules` is this checkout's, as `npm ci` made it, so that the pack's
 * prepack empties and rebuilds the copy's dist/, never the one other test files start the CLI
 * from meanwhile; the sandbox takes a free port (`--port 0`, on 127.0.0.1, its default host)
 * rather than 8080; and `npm install -g` installs into the temporary folder (NPM_CONFIG_PREFIX).
 * Every `controls-migrate` the block runs is the installed one; a wrapper records each exit code.
 */
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import {
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { REPO_ROOT } from "../helpers/cli.ts";
import { tempDir } from "../helpers/temp-dir.ts";

/** The whole rehearsal is bounded: past this, its process group is killed and the test fails. */
const BOUND_MS = 15 * 60_000;

/**
 * A clone as README's rehearsal asks for, "after npm ci", in `dir`: this checkout's files as they
 * are now, and its node_modules (linked: what `npm ci` installed, and the PGlite template the
 * build keeps in node_modules/.cache/ for the next build).
 */
function cloneOfCheckout(dir: string): string {
  const listed = execFileSync(
    "git",
    ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    { cwd: REPO_ROOT, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
  );
  for (const file of listed.split("\0").filter(Boolean)) {
    const from = join(REPO_ROOT, file);
    if (!existsSync(from)) continue; // deleted in the working tree, not yet in the index
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(from, join(dir, file));
  }
  symlinkSync(join(REPO_ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  return dir;
}

/** README's rehearsal block, with the two substitutions the file's comment names. */
function rehearsalScript(clone: string): string {
  const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## A rehearsal, start to end"));
  const start = section.indexOf("```sh\n") + "```sh\n".length;
  const block = section.slice(start, section.indexOf("```", start));
  assert.match(block, /npm install -g \.\/controls-migrate-\*\.tgz/, "step 0 installs a file");
  const swap = (text: string, from: string, to: string) => {
    assert.ok(text.includes(from), `README's rehearsal has ${from}`);
    return text.replace(from, to);
  };
  let script = swap(block, "CLONE=~/src/controls-migrate", `CLONE=${JSON.stringify(clone)}`);
  script = swap(script, "--port 8080", "--port 0");
  // Each controls-migrate: its exit code, and a reconcile's summary before step 8 removes it.
  const wrapper = `controls-migrate() {
  command controls-migrate "$@"; local c=$?
  echo "$c $1" >>"$EXITS"
  if [ "$1" = reconcile ]; then cp "$(ls -td reports/*/ | head -n 1)summary.json" "$RECONCILED"; fi
  return $c
}
`;
  return wrapper + script;
}

/** Runs `script` by bash in `cwd`; what it prints goes to `log` (told when the test fails). */
function runBash(
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  log: string,
): Promise<number | null> {
  const file = join(cwd, "rehearsal.sh");
  writeFileSync(file, script);
  const out = openSync(log, "w");
  const child = spawn("bash", [file], { cwd, env, detached: true, stdio: ["ignore", out, out] });
  closeSync(out);
  const group = () => {
    try {
      process.kill(-(child.pid ?? 0), "SIGKILL");
    } catch {
      // The group is gone already.
    }
  };
  const timer = setTimeout(group, BOUND_MS);
  return new Promise((resolve) => {
    child.on("exit", (code) => {
      clearTimeout(timer);
      group(); // the sandbox, should the block have stopped before step 8 killed it
      resolve(code);
    });
  });
}

describe("README's rehearsal", () => {
  it("runs start to end from the pack-and-install step, each command exiting as its comment says", async () => {
    const home = tempDir("cm-rehearsal-");
    const prefix = join(home, "prefix");
    const exits = join(home, "exits");
    const reconciled = join(home, "reconcile-summary.json");
    // Under `npm test`, npm hands its own settings down as npm_config_* (its global prefix among
    // them, which would win over NPM_CONFIG_PREFIX and install into the machine's node): none
    // of them reaches the rehearsal.
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !/^npm_config_/i.test(k)),
    );
    const env: NodeJS.ProcessEnv = {
      ...inherited,
      PATH: `${join(prefix, "bin")}:${process.env.PATH}`,
      NPM_CONFIG_PREFIX: prefix,
      npm_config_prefer_offline: "true",
      npm_config_audit: "false",
      npm_config_fund: "false",
      npm_config_update_notifier: "false",
      EXITS: exits,
      RECONCILED: reconciled,
    };
    for (const k of Object.keys(env)) if (/^(CONTROLS_|API_BASE_URL|OAUTH_)/.test(k)) delete env[k];
    const clone = cloneOfCheckout(join(home, "clone"));
    const log = join(home, "rehearsal.log");
    const code = await runBash(rehearsalScript(clone), home, env, log);
    const ran = existsSync(exits) ? readFileSync(exits, "utf8").trim().split("\n") : [];
    // What the commands printed on error, for a failure's message (their exit codes say which).
    const said = readFileSync(log, "utf8")
      .split("\n")
      .filter((l) => /^Error|error|Unknown/.test(l))
      .slice(0, 10)
      .join("\n");
    assert.equal(code, 0, `${ran.join("\n")}\n${said}`);
    assert.deepEqual(
      ran,
      [
        "0 --version",
        "0 db",
        "2 plan",
        "0 apply",
        "0 runs",
        "0 apply",
        "2 reconcile",
        "0 revert",
        "0 revert",
      ],
      said,
    );
    // Step 6's comment: reconcile's exit 2 comes from client-side findings no create resolves.
    const left = JSON.parse(readFileSync(reconciled, "utf8")).findings_left as Record<
      string,
      number
    >;
    assert.equal(left.missing_client_control ?? 0, 0, "nothing left to create");
    const named = ["unexpected_client_control", "source_behind_platform"];
    const clientSide = named.filter((k) => (left[k] ?? 0) > 0);
    assert.ok(clientSide.length > 0, JSON.stringify(left));
    assert.ok(!existsSync(join(home, "rehearsal")), "step 8 removed its folder");
  });
});
