/**
 * One writer per report folder: eight `plan` runs started at once with the same new `--out`, on
 * each backend (env HOSTILE_STARTS for more). Exactly one writes its report there; every other one is refused with exit 1 before
 * any work, naming the run that holds the folder (or, had it finished already, whose report it is).
 */
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { runCli } from "../helpers/cli.ts";
import { seededTarget } from "../helpers/cli-rig.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { type HostilePlatform, startHostilePlatform } from "../helpers/hostile-platform.ts";

const N = 20;
/**
 * Whether two starts can both take the folder is the lock's race, which db.data-dir-lock runs 100
 * times with three processes in the same millisecond (the folder's lock is the data folder's
 * scheme, `acquireDataDirLock`). Here: that the CLI claims the folder through it before any work,
 * that one run writes and every other start is refused naming it. Eight starts show that as
 * twenty did (each refused start met the running writer), at 12 child processes less.
 */
const STARTS = Number(process.env.HOSTILE_STARTS ?? 8);
const IDS = [...syntheticIdentities(N, 9)].map((r) => r.id);

for (const backend of backends) {
  describe(`one writer per --out folder on ${backend.name}`, { timeout: 900_000 }, () => {
    let target: TestTarget;
    let platform: HostilePlatform;
    let root: string;
    before(async () => {
      target = await seededTarget(backend, { identities: N, seed: 9 });
      platform = await startHostilePlatform({ identities: IDS });
      root = mkdtempSync(join(tmpdir(), "cm-one-writer-"));
    });
    after(async () => {
      await platform.close();
      await target.drop();
      rmSync(root, { recursive: true, force: true });
    });

    it(`${STARTS} concurrent plans given the same new --out: exactly one writes the folder, the others exit 1 naming the run that holds it, and every report file there is that one run's`, async () => {
      const out = join(root, "contested");
      const args = ["plan", "--no-progress", "--state", "bulk", "--out", out, ...target.args];
      const results = await Promise.all(
        Array.from({ length: STARTS }, () => runCli(args, platform.env)),
      );
      const writers = results.filter((r) => r.code === 0 || r.code === 2);
      const refused = results.filter((r) => r.code === 1);
      assert.equal(writers.length, 1, results.map((r) => `${r.code}: ${r.stderr}`).join("\n---\n"));
      assert.equal(refused.length, STARTS - 1);
      const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as {
        run_id: string;
      };
      for (const r of refused) {
        assert.match(
          r.stderr,
          new RegExp(
            `ERROR The report folder .*contested (is being written by another run \\((run ${summary.run_id}|a run starting), pid \\d+ on |already holds the report of run ${summary.run_id})|ERROR The embedded database in .* is in use by another process`,
          ),
          r.stderr,
        );
        assert.doesNotMatch(r.stderr, /Run \S+ \(plan\) started/, "refused before any work");
      }
      assert.ok(
        refused.some((r) => /is being written by another run/.test(r.stderr)),
        "at least one start met the running writer",
      );
      const files = readdirSync(out).filter((f) => !f.startsWith("."));
      assert.deepEqual(files.sort(), ["diff.csv", "report.html", "summary.json", "summary.md"]);
      const csvRunIds = new Set(
        readFileSync(join(out, "diff.csv"), "utf8")
          .trim()
          .split("\n")
          .slice(1)
          .map((line) => line.split(",")[0]),
      );
      assert.ok(csvRunIds.size <= 1, `diff.csv rows of runs ${[...csvRunIds].join(", ")}`);
      if (csvRunIds.size === 1) assert.ok(csvRunIds.has(summary.run_id));
      assert.match(readFileSync(join(out, "summary.md"), "utf8"), new RegExp(summary.run_id));
      assert.match(readFileSync(join(out, "report.html"), "utf8"), new RegExp(summary.run_id));
      assert.deepEqual(
        readdirSync(out).filter((f) => f.endsWith(".lock") || f.endsWith(".tmp")),
        [],
        "the writer let go of the folder",
      );
    });
  });
}
