/**
 * Grouped writes of classified batches (`grouped-writes.ts`): batches that arrive while a
 * statement runs go together in the next one, and what is stored is what one statement a batch
 * would have stored, on both backends.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import type { PendingActionOf } from "../../src/db/journal/store-classified.ts";
import type { NewFinding } from "../../src/db/schema.ts";
import {
  type ClassifiedBatch,
  GroupedWrites,
} from "../../src/migration/classify/grouped-writes.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

function finding(runId: string, n: number): NewFinding {
  return {
    run_id: runId,
    identity_id: id(n),
    finding: "missing_client_control",
    user_disabled: true,
    admin_disabled: false,
    expected_type: "SELL_ONLY",
    expected_set_by: "CLIENT",
    expected_is_overridable: true,
    observed_control_id: null,
    observed_set_by: null,
    observed_is_overridable: null,
    other_active_controls: null,
    detail: null,
    platform_user_disabled: false,
    platform_admin_disabled: false,
    prunable: false,
  };
}

const create = (n: number): PendingActionOf => ({
  identity_id: id(n),
  finding: "missing_client_control",
  observed_control_id: null,
  action: "create",
  control_type: "SELL_ONLY",
  control_key: "SELL_ONLY:client",
});

/** Identities `from`..`to` (inclusive): each observed, with a finding and its create. */
function batch(runId: string, from: number, to: number): ClassifiedBatch {
  const ns = Array.from({ length: to - from + 1 }, (_, i) => from + i);
  return {
    identities: ns.map((n) => ({
      run_id: runId,
      identity_id: id(n),
      status: "found" as const,
      error: null,
      platform_user_disabled: false,
      platform_admin_disabled: false,
    })),
    controls: [],
    findings: ns.map((n) => finding(runId, n)),
    actions: ns.map(create),
  };
}

for (const backend of backends) {
  describe(`grouped writes on ${backend.name}`, () => {
    let h: TestDatabase;
    let seq = 0;
    before(async () => {
      h = await backend.open({ migrate: true });
    });
    after(() => h.close());

    async function newRun(): Promise<string> {
      seq += 1;
      const runId = `20260101-00000${seq}-grp`;
      await sql`insert into controls_migration.runs (id, mode, status, tool_version, host, pid)
        values (${runId}, 'apply', 'running', 'test', 'here', 1)`.execute(h.db);
      return runId;
    }
    const count = async (table: string, runId: string) =>
      Number(
        (
          await sql<{
            n: string;
          }>`select count(*) as n from ${sql.table(`controls_migration.${table}`)}
            where run_id = ${runId}`.execute(h.db)
        ).rows[0]?.n,
      );

    it("batches sent while a statement runs go in the next one, and every finding and action is stored once", async () => {
      const runId = await newRun();
      const writes = new GroupedWrites(h.db);
      // Six batches in one tick: the first finds nothing running and goes alone; the other five
      // wait for it and go together.
      const counts = await Promise.all(
        [0, 1, 2, 3, 4, 5].map((k) => writes.write(batch(runId, k * 10 + 1, k * 10 + 10))),
      );
      assert.equal(writes.batches, 6);
      assert.equal(writes.statements, 2);
      assert.equal(
        counts.reduce((a, b) => a + b, 0),
        60,
        "the journaled actions, summed over batches",
      );
      assert.equal(await count("findings", runId), 60);
      assert.equal(await count("snapshot_identities", runId), 60);
      const orphans = await sql<{ n: string }>`
        select count(*) as n from controls_migration.actions a
        left join controls_migration.findings f on f.id = a.finding_id and f.identity_id = a.identity_id
        where a.run_id = ${runId} and f.id is null`.execute(h.db);
      assert.equal(await count("actions", runId), 60);
      assert.equal(
        Number(orphans.rows[0]?.n),
        0,
        "each action points at its own identity's finding",
      );
    });

    it("an identity observed in two batches of one group keeps the row of the later batch", async () => {
      const runId = await newRun();
      const writes = new GroupedWrites(h.db);
      const first = batch(runId, 1, 3);
      const row = (platformUser: boolean) => ({
        run_id: runId,
        identity_id: id(99),
        status: "found" as const,
        error: null,
        platform_user_disabled: platformUser,
        platform_admin_disabled: false,
      });
      const earlier = { ...batch(runId, 4, 5), identities: [row(false)] };
      const later = { ...batch(runId, 6, 7), identities: [row(true)] };
      await Promise.all([writes.write(first), writes.write(earlier), writes.write(later)]);
      assert.equal(writes.statements, 2, "the two batches with identity 99 went in one statement");
      const r = await sql<{ platform_user_disabled: boolean }>`
        select platform_user_disabled from controls_migration.snapshot_identities
        where run_id = ${runId} and identity_id = ${id(99)}`.execute(h.db);
      assert.deepEqual(r.rows, [{ platform_user_disabled: true }]);
    });

    it("a group whose statement fails rejects every batch in it, stores none of them, and the next batch is stored", async () => {
      const runId = await newRun();
      const writes = new GroupedWrites(h.db);
      const broken = {
        ...batch(runId, 11, 12),
        findings: [{ ...finding(runId, 11), finding: null as unknown as string }],
      };
      const results = await Promise.allSettled([
        writes.write(batch(runId, 1, 2)),
        writes.write(broken),
        writes.write(batch(runId, 21, 22)),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ["fulfilled", "rejected", "rejected"],
      );
      assert.equal(await writes.write(batch(runId, 31, 32)), 2);
      const ids = await sql<{ identity_id: string }>`
        select identity_id from controls_migration.findings where run_id = ${runId}
        order by identity_id`.execute(h.db);
      assert.deepEqual(
        ids.rows.map((r) => r.identity_id),
        [id(1), id(2), id(31), id(32)],
      );
    });
  });
}
