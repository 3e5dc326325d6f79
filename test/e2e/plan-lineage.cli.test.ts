/**
 * Issue 50 §5: a plan and its apply are one lineage. `plan`, then `apply --plan`, then
 * `reconcile --exit-on changes` with nothing changed outside the tool: the reconcile compares with
 * the plan's observation plus the apply's writes, reports no outside change and exits 0.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { backends } from "../helpers/db.ts";
import { type ReadWorld, type Row, readWorld, summaryOf, worldIds } from "../helpers/read-world.ts";

const IDS = worldIds(10, 5011);
/** 8 flagged (2 of them admin only), 2 unflagged. */
const ROWS: Row[] = IDS.map((id, i) => [id, i < 6, i >= 6 && i < 8]);

for (const backend of backends) {
  describe(`plan → apply --plan → reconcile on ${backend.name}`, { timeout: 300_000 }, () => {
    let w: ReadWorld;
    before(async () => {
      w = await readWorld(backend, ROWS);
    });
    after(async () => {
      await w.close();
    });

    it("reports 0 outside changes and exits 0 under --exit-on changes when nothing changed", async () => {
      const plan = await w.run("plan", "--state", "bulk");
      const planId = summaryOf(plan).run_id;
      const applied = await w.run("apply", "--plan", planId);
      assert.equal(applied.code, 0, applied.stderr.slice(-3000));
      const r = await w.run("reconcile", "--state", "bulk", "--exit-on", "changes");
      const s = summaryOf(r);
      assert.equal(s.changes?.outside_total, 0, JSON.stringify(s.changes));
      assert.equal(s.changes?.new_client_work, 0, JSON.stringify(s.changes));
      assert.equal(r.code, 0, r.stderr.slice(-3000));
    });
  });
}
