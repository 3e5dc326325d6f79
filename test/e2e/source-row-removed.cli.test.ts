/**
 * A source row deleted is an outside change (`source_row_removed`) when it was flagged, as a row
 * added is `source_row_added` only when it comes flagged: a clean row is one the tool has nothing
 * to migrate for, whether or not the last run happened to look it up. Found by the nightly model
 * (seed 424242, its 22nd sequence): an unflagged identity holding a client's SELL_ONLY has its row
 * looked up by a bulk run (its control is a finding); the row deleted, the next night reported
 * `source_row_removed 1` ("user_disabled false, admin_disabled false when last read") where the
 * same deletion of a clean row without a control reports nothing. Through the CLI against the
 * sandbox over real HTTP.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { backends } from "../helpers/db.ts";
import { type ReadWorld, type Row, readWorld, summaryOf, worldIds } from "../helpers/read-world.ts";

const IDS = worldIds(4, 5021);
/** Two flagged rows, two clean ones. */
const ROWS: Row[] = IDS.map((id, i) => [id, i < 2, false]);
const [FLAGGED, CLEAN_WITH_CONTROL] = [IDS[0] ?? "", IDS[2] ?? ""];

for (const backend of backends) {
  describe(`source rows deleted between two reconciles on ${backend.name}`, {
    timeout: 300_000,
  }, () => {
    let w: ReadWorld;
    before(async () => {
      w = await readWorld(backend, ROWS);
    });
    after(async () => {
      await w.close();
    });

    it("count as source_row_removed only where the row was flagged, a clean row looked up for its control included", async () => {
      assert.equal(summaryOf(await w.run("reconcile", "--state", "bulk")).findings.in_sync ?? 0, 0);
      // A client's control on a clean identity: the next bulk run looks its row up (a finding).
      w.sandbox.addControl(CLEAN_WITH_CONTROL, { type: "SELL_ONLY", set_by: "SET_BY_CLIENT" });
      const held = summaryOf(await w.run("reconcile", "--state", "bulk"));
      assert.equal(held.changes?.outside.control_added, 1, JSON.stringify(held.changes));
      const h = await w.target.open();
      try {
        const looked = await sql<{ n: number }>`select count(*)::int as n
          from controls_migration.source_rows where run_id = ${held.run_id}
          and identity_id = ${CLEAN_WITH_CONTROL}`.execute(h.db);
        assert.equal(looked.rows[0]?.n, 1, "the bulk run kept the clean row it looked up");
        await sql`delete from identities where id in (${FLAGGED}, ${CLEAN_WITH_CONTROL})`.execute(
          h.db,
        );
      } finally {
        await h.close();
      }
      const r = await w.run("reconcile", "--state", "filtered", "--exit-on", "changes");
      const s = summaryOf(r);
      // The flagged row's deletion alone: the clean row's is nothing to migrate.
      assert.equal(s.changes?.outside.source_row_removed, 1, JSON.stringify(s.changes?.outside));
      assert.equal(r.code, 2, r.stderr.slice(-2000));
    });
  });
}
