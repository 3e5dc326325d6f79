/**
 * `scripts/run-suite.mjs`, `npm test`'s runner: node with the given arguments and a temporary
 * folder of the run's own (on /dev/shm when that is a tmpfs with room), removed when the run
 * ends; a run whose tests leave a file behind, there or in the working tree, fails and names it.
 */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { REPO_ROOT } from "../helpers/cli.ts";

const RUNNER = join(REPO_ROOT, "scripts", "run-suite.mjs");

/** A child that prints its TMPDIR and that folder's mode, runs `body`, and exits with `code`. */
const child = (
  body: string,
  code: number,
) => `const fs=require("fs"),os=require("os"),p=require("path");
console.log(os.tmpdir());console.log((fs.statSync(os.tmpdir()).mode & 0o7777).toString(8));
${body};process.exit(${code});`;

function roomyTmpfs(): string | undefined {
  try {
    const fs = statfsSync("/dev/shm");
    if (fs.type !== 0x01021994) return "/dev/shm is not a tmpfs here";
    return fs.bavail * fs.bsize < 4 * 1024 ** 3 ? "/dev/shm has less than 4 GiB free" : undefined;
  } catch {
    return "this machine has no /dev/shm";
  }
}

function run(script: string, o: { env?: NodeJS.ProcessEnv; cwd?: string } = {}) {
  const env = { ...(o.env ?? process.env) };
  delete env.NODE_TEST_CONTEXT;
  return spawnSync(process.execPath, [RUNNER, "-e", script], {
    env,
    cwd: o.cwd ?? REPO_ROOT,
    encoding: "utf8",
  });
}

const withoutTmpdir = () => {
  const env = { ...process.env };
  delete env.TMPDIR;
  return env;
};

describe("npm test's runner (scripts/run-suite.mjs)", () => {
  it("puts the run's temporary files on /dev/shm in a folder open to every account as /tmp is, removes them when it ends, and exits with the run's code", {
    skip: roomyTmpfs(),
  }, () => {
    const r = run(child("", 3), { env: withoutTmpdir() });
    assert.equal(r.status, 3, r.stderr);
    const [folder = "", mode] = r.stdout.trim().split("\n");
    assert.match(folder, /^\/dev\/shm\/controls-migrate-suite-/);
    // Open to every account as /tmp is (sticky): a server run as postgres gets a folder in it.
    assert.equal(mode, "1777");
    assert.equal(existsSync(folder), false, `${folder} is removed`);
  });

  it("makes its folder inside a TMPDIR the caller set, and leaves the caller's folder as it was", () => {
    const mine = mkdtempSync(join(tmpdir(), "run-suite-own-"));
    try {
      const r = run(child("", 0), { env: { ...process.env, TMPDIR: mine } });
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout.split("\n")[0] ?? "", new RegExp(`^${mine}/controls-migrate-suite-`));
      assert.deepEqual(readdirSync(mine), []);
    } finally {
      rmSync(mine, { recursive: true, force: true });
    }
  });

  it("fails a run whose tests all passed but left a file in its temporary folder, and names the file", () => {
    const r = run(child(`fs.mkdirSync(p.join(os.tmpdir(),"cm-forgotten"))`, 0));
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /left 1 file\(s\) behind/);
    assert.match(r.stderr, /TMPDIR: cm-forgotten/);
  });

  it("keeps a failed run's own exit code when it also left files behind", () => {
    const r = run(child(`fs.writeFileSync(p.join(os.tmpdir(),"left"),"x")`, 4));
    assert.equal(r.status, 4, r.stderr);
    assert.match(r.stderr, /TMPDIR: left/);
  });

  it("gives the tests node's compile cache in node_modules/.cache, outside the temporary folder and the sources", () => {
    const env = { ...process.env };
    delete env.NODE_COMPILE_CACHE;
    const r = run(child("console.log(process.env.NODE_COMPILE_CACHE)", 0), { env });
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trim().split("\n");
    assert.equal(lines.length, 3, r.stdout);
    assert.equal(lines[2], join(REPO_ROOT, "node_modules/.cache/node-compile-cache"));
  });

  describe("in a git checkout", () => {
    let repo: string;
    before(() => {
      repo = mkdtempSync(join(tmpdir(), "run-suite-repo-"));
      const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "ignore" });
      writeFileSync(join(repo, ".gitignore"), "reports/*\n.data/\nnode_modules/\ndist/\n");
      writeFileSync(join(repo, "tracked.txt"), "a\n");
      git("init", "-q");
      git("add", "-A");
      git("-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "-m", "init");
      // There before the run: not the run's doing.
      writeFileSync(join(repo, "mine-already.txt"), "x");
    });
    after(() => rmSync(repo, { recursive: true, force: true }));

    it("fails a run that wrote into the working tree, naming new, ignored and modified files alike", () => {
      const r = run(
        child(
          `fs.writeFileSync("stray.txt","x");fs.mkdirSync(".data");fs.writeFileSync(".data/db","x");fs.mkdirSync("reports");fs.writeFileSync("reports/run.csv","x");fs.appendFileSync("tracked.txt","b\\n")`,
          0,
        ),
        { cwd: repo },
      );
      assert.equal(r.status, 1, r.stderr);
      for (const named of ["?? stray.txt", "!! .data/", "!! reports/run.csv", " M tracked.txt"]) {
        assert.ok(r.stderr.includes(`working tree: ${named}`), `${named} named in:\n${r.stderr}`);
      }
      assert.doesNotMatch(r.stderr, /mine-already/);
    });

    it("fails a run that left a folder in the working tree, even an empty one git does not show", () => {
      const r = run(
        child(
          `fs.mkdirSync("made/x",{recursive:true});fs.writeFileSync("made/x/status.json","x");fs.rmSync("made/x/status.json");fs.mkdirSync("empty")`,
          0,
        ),
        { cwd: repo },
      );
      assert.equal(r.status, 1, r.stderr);
      for (const named of ["made/", "empty/"]) {
        assert.ok(
          r.stderr.includes(`working tree: ${named} (a folder)`),
          `${named} named in:\n${r.stderr}`,
        );
      }
      assert.doesNotMatch(r.stderr, /made\/x/, "only the outermost new folder is named");
      for (const path of ["made", "empty"]) rmSync(join(repo, path), { recursive: true });
    });

    it("passes a run that wrote only where it may: its TMPDIR, the dependencies' and the build's folders", () => {
      execFileSync("git", ["checkout", "-q", "--", "tracked.txt"], { cwd: repo });
      for (const path of ["stray.txt", ".data", "reports"]) {
        rmSync(join(repo, path), { recursive: true, force: true });
      }
      const r = run(
        child(
          `fs.writeFileSync(p.join(os.tmpdir(),"t"),"x");fs.rmSync(p.join(os.tmpdir(),"t"));fs.mkdirSync("node_modules/.cache/t",{recursive:true});fs.writeFileSync("node_modules/.cache/t/f","x");fs.mkdirSync("packages/a/node_modules",{recursive:true});fs.writeFileSync("packages/a/node_modules/f","x");fs.mkdirSync("dist");fs.writeFileSync("dist/f","x")`,
          0,
        ),
        {
          cwd: repo,
        },
      );
      assert.equal(r.status, 0, r.stderr);
    });
  });
});
