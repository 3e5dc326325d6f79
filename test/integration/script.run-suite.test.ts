/**
 * `scripts/run-suite.mjs`, `npm test`'s runner: node with the given arguments, the suite's
 * temporary files on /dev/shm when that is a tmpfs with room, removed when the run ends.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { REPO_ROOT } from "../helpers/cli.ts";

const RUNNER = join(REPO_ROOT, "scripts", "run-suite.mjs");
/** Writes a file under the TMPDIR it was given, prints that folder, exits 3. */
const CHILD = `const fs=require("fs"),os=require("os"),p=require("path");
fs.writeFileSync(p.join(os.tmpdir(),"left-behind"),"x");
console.log(os.tmpdir());console.log((fs.statSync(os.tmpdir()).mode & 0o7777).toString(8));process.exit(3);`;

function roomyTmpfs(): string | undefined {
  try {
    const fs = statfsSync("/dev/shm");
    if (fs.type !== 0x01021994) return "/dev/shm is not a tmpfs here";
    return fs.bavail * fs.bsize < 4 * 1024 ** 3 ? "/dev/shm has less than 4 GiB free" : undefined;
  } catch {
    return "this machine has no /dev/shm";
  }
}

function run(env: NodeJS.ProcessEnv) {
  return spawnSync(process.execPath, [RUNNER, "-e", CHILD], { env, encoding: "utf8" });
}

describe("npm test's runner (scripts/run-suite.mjs)", () => {
  it("puts the run's temporary files on /dev/shm in a folder open to every account as /tmp is, removes them when it ends, and exits with the run's code", {
    skip: roomyTmpfs(),
  }, () => {
    const env = { ...process.env };
    delete env.TMPDIR;
    const r = run(env);
    assert.equal(r.status, 3, r.stderr);
    const [folder = "", mode] = r.stdout.trim().split("\n");
    assert.match(folder, /^\/dev\/shm\/controls-migrate-suite-/);
    // Open to every account as /tmp is (sticky): a server run as postgres gets a folder in it.
    assert.equal(mode, "1777");
    assert.equal(existsSync(folder), false, `${folder} is removed`);
  });

  it("keeps a TMPDIR the caller set, and leaves that folder to the caller", () => {
    const mine = mkdtempSync(join(tmpdir(), "run-suite-own-"));
    try {
      const r = run({ ...process.env, TMPDIR: mine });
      assert.equal(r.status, 3, r.stderr);
      assert.equal(r.stdout.trim().split("\n")[0], mine);
      assert.equal(existsSync(join(mine, "left-behind")), true, "the caller's folder is untouched");
    } finally {
      rmSync(mine, { recursive: true, force: true });
    }
  });
});
