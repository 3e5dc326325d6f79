/**
 * Issue 55: what a complete listing showed bare (`listed_bare`, 0019), and which candidates whose
 * source row changed `--since-last` may carry as bare instead of reading them by id.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { insertRun, newRunId } from "../../src/db/journal/run-queries.ts";
import { TOOL_TABLES } from "../../src/db/schema.ts";
import { BareListed, stillBare } from "../../src/migration/read/bare-listed.ts";
import { NO_CONTROLS } from "../../src/migration/read/listed-identity.ts";
import { legacyOf } from "../../src/migration/read/three-way-listing.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";

const PLATFORM = "https://api.example|https://auth.example/token|client";
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

for (const backend of backends) {
  describe(`identities listed bare on ${backend.name}`, () => {
    let h: TestDatabase;
    before(async () => {
      h = await backend.open({ migrate: true });
    });
    after(async () => {
      await h.close();
    });

    async function run(at: number, since: string | null = null) {
      const id = newRunId();
      await insertRun(h.db, {
        id,
        mode: "reconcile",
        parentRunId: null,
        options: {},
        toolVersion: "t",
      });
      await h.db
        .updateTable(TOOL_TABLES.runs)
        .set({ started_at: new Date(at), platform_key: PLATFORM, since_run_id: since })
        .where("id", "=", id)
        .execute();
      return id;
    }

    it("records, from a listing's pages, only the identities with no control and both legacy fields false, UUIDs and other ids alike", async () => {
      const runId = await run(Date.parse("2026-11-29T01:00:00Z"));
      const bare = new BareListed(h.db, runId);
      const control = {
        run_id: runId,
        identity_id: uuid(2),
        control_id: "c1",
        type: "SELL_ONLY",
        set_by: "client" as const,
        set_by_raw: "SET_BY_CLIENT",
        is_overridable: true,
        reason_code: "OTHER",
        reason: null,
        created_at: null,
        deleted_at: null,
      };
      bare.note([
        { id: uuid(1), controls: NO_CONTROLS },
        { id: "legacy-id-7", controls: NO_CONTROLS, legacy: legacyOf(false, false) },
        { id: uuid(2), controls: [control] },
        { id: uuid(3), controls: NO_CONTROLS, legacy: legacyOf(true, false) },
        { id: uuid(4), controls: NO_CONTROLS, legacy: legacyOf(null, false) },
      ]);
      await bare.flush();
      const asked = [uuid(1), "legacy-id-7", uuid(2), uuid(3), uuid(4), uuid(5)];
      const later = await run(Date.parse("2026-11-29T02:00:00Z"), runId);
      assert.deepEqual([...(await stillBare(h.db, later, runId, asked))].sort(), [
        uuid(1),
        "legacy-id-7",
      ]);
    });

    it("does not count as still bare an identity a run since the complete read holds a snapshot row of, or wrote to", async () => {
      const complete = await run(Date.parse("2026-11-29T03:00:00Z"));
      const bare = new BareListed(h.db, complete);
      bare.note([uuid(11), uuid(12), uuid(13)].map((id) => ({ id, controls: NO_CONTROLS })));
      await bare.flush();
      const incremental = await run(Date.parse("2026-11-29T04:00:00Z"), complete);
      // Listed as changed by an incremental run, with a control: no longer known bare.
      await sql`insert into controls_migration.snapshot_identities
        (run_id, identity_id, status, observed_via) values (${incremental}, ${uuid(12)}, 'found', 'listing')`.execute(
        h.db,
      );
      // Written to by the complete run's reconcile.
      await sql`insert into controls_migration.actions
        (run_id, identity_id, action, control_type, control_key, status)
        values (${complete}, ${uuid(13)}, 'create', 'SELL_ONLY', 'SELL_ONLY:client', 'succeeded')`.execute(
        h.db,
      );
      const now = await run(Date.parse("2026-11-29T05:00:00Z"), complete);
      const asked = [uuid(11), uuid(12), uuid(13)];
      assert.deepEqual([...(await stillBare(h.db, now, complete, asked))], [uuid(11)]);
      // Another complete run's bare ids say nothing of this one.
      const other = await run(Date.parse("2026-11-29T06:00:00Z"));
      assert.deepEqual([...(await stillBare(h.db, now, other, asked))], []);
    });
  });
}
