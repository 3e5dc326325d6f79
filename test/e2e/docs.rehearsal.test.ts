/**
 * README's rehearsal, run as written (issue 54): its one shell block, from the pack-and-install
 * step on, in a temporary folder, by bash. Three things differ from a person's shell, each said
 * where it is done: `CLONE` is this checkout; the sandbox takes a free port (`--port 0`, on
 * 127.0.0.1, its default host) rather than 8080; `npm pack` skips its prepack build (the suite
 * built dist/ before it started, and other test files start the CLI from it meanwhile), and
 * `npm install -g` installs into the temporary folder (NPM_CONFIG_PREFIX). Every
 * `controls-migrate` the block runs is the installed one; a wrapper records each exit code.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { REPO_ROOT } from "../helpers/cli.ts";
import { tempDir } from "../helpers/temp-dir.ts";

/** The whole rehearsal is bounded: past this, its process group is killed and the test fails. */
const BOUND_MS = 15 * 60_000;

/** README's rehearsal block, with the three substitutions the file's comment names. */
function rehearsalScript(): string {
  const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## A rehearsal, start to end"));
  const start = section.indexOf("```sh\n") + "```sh\n".length;
  const block = section.slice(start, section.indexOf("```", start));
  assert.match(block, /npm install -g \.\/controls-migrate-\*\.tgz/, "step 0 installs a file");
  const swap = (text: string, from: string, to: string) => {
    assert.ok(text.includes(from), `README's rehearsal has ${from}`);
    return text.replace(from, to);
  };
  let script = swap(block, "CLONE=~/src/controls-migrate", `CLONE=${JSON.stringify(REPO_ROOT)}`);
  script = swap(script, "--port 8080", "--port 0");
  script = swap(script, "npm pack --silent", "npm pack --silent --ignore-scripts");
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

function runBash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<number | null> {
  const file = join(cwd, "rehearsal.sh");
  writeFileSync(file, script);
  const child = spawn("bash", [file], { cwd, env, detached: true, stdio: "ignore" });
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
  it("runs start to end from the pack-and-install step, each command exiting as its comment says", {
    skip: existsSync(join(REPO_ROOT, "dist", "cli.cjs")) ? false : "dist/ is not built",
  }, async () => {
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
    const code = await runBash(rehearsalScript(), home, env);
    const ran = existsSync(exits) ? readFileSync(exits, "utf8").trim().split("\n") : [];
    assert.equal(code, 0, ran.join("\n"));
    assert.deepEqual(ran, [
      "0 --version",
      "0 db",
      "2 plan",
      "0 apply",
      "0 runs",
      "0 apply",
      "2 reconcile",
      "0 revert",
      "0 revert",
    ]);
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
