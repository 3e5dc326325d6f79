/**
 * The suite's cached folders (the initialised and the migrated PGlite database) are built once
 * however many test processes ask for them at the same moment (`../helpers/build-once.ts`).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { REPO_ROOT } from "../helpers/cli.ts";
import { lockHeldByDeadProcess } from "../helpers/dead-lock-holder.ts";

const BUILD_ONCE = pathToFileURL(join(REPO_ROOT, "test/helpers/build-once.ts")).href;

/** A process asking for `home`, whose build logs its pid to `log` and takes 300 ms. */
function asker(home: string, log: string): Promise<{ code: number | null; out: string }> {
  const script = `
    import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
    import { join } from "node:path";
    const { buildOnce } = await import(${JSON.stringify(BUILD_ONCE)});
    const home = await buildOnce(${JSON.stringify(home)}, async (into) => {
      appendFileSync(${JSON.stringify(log)}, process.pid + "\\n");
      await new Promise((r) => setTimeout(r, 300));
      writeFileSync(join(into, "made-by"), String(process.pid));
    });
    process.stdout.write(readFileSync(join(home, "made-by"), "utf8"));`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, out })));
}

const builders = (log: string) => readFileSync(log, "utf8").trim().split("\n").filter(Boolean);

describe("a cached folder asked for by several test processes at once", () => {
  const dir = mkdtempSync(join(tmpdir(), "cm-build-once-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("is built by one of four processes started together, and all four read that one", async () => {
    const home = join(dir, "together");
    const log = join(dir, "together.log");
    writeFileSync(log, "");
    const runs = await Promise.all([1, 2, 3, 4].map(() => asker(home, log)));
    assert.deepEqual(
      runs.map((r) => r.code),
      [0, 0, 0, 0],
    );
    const built = builders(log);
    assert.equal(built.length, 1, `built by ${built.join(", ")}`);
    assert.deepEqual(
      runs.map((r) => r.out),
      [built[0], built[0], built[0], built[0]],
    );
  });

  it("is built by the next process when the lock's process is gone", async () => {
    const home = join(dir, "dead-holder");
    const log = join(dir, "dead-holder.log");
    writeFileSync(log, "");
    lockHeldByDeadProcess(home);
    assert.ok(existsSync(`${home}.lock`), "the dead process left its lock");
    const run = await asker(home, log);
    assert.equal(run.code, 0);
    assert.deepEqual(builders(log), [run.out]);
  });

  it("is built by the next process when a lock was not touched for longer than the stale time", async () => {
    const home = join(dir, "stale");
    const log = join(dir, "stale.log");
    writeFileSync(log, "");
    writeFileSync(`${home}.lock`, "not a holder\n");
    const old = new Date(Date.now() - 120_000);
    utimesSync(`${home}.lock`, old, old);
    const run = await asker(home, log);
    assert.equal(run.code, 0);
    assert.deepEqual(builders(log), [run.out]);
  });
});
