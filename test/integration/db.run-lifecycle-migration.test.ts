import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Kysely, Migrator, sql } from "kysely";
import * as initial from "../../migrations/0001-initial.ts";
import { migrations } from "../../migrations/index.ts";
import { migrateToLatest } from "../../src/db/connection/migrate.ts";
import { TOOL_SCHEMA, TOOL_TABLES } from "../../src/db/schema.ts";
import { silentLogger } from "../../src/log.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";

/** A database as 0001 left it: only the first migration applied. */
async function migrateTo0001(db: Kysely<unknown>): Promise<void> {
  await sql`create schema if not exists ${sql.id(TOOL_SCHEMA)}`.execute(db);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => ({ "0001_initial": initial }) },
    migrationTableSchema: TOOL_SCHEMA,
  });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
}

for (const b of backends) {
  describe(`migration 0002_run_lifecycle on ${b.name}`, () => {
    let h: TestDatabase;
    before(async () => {
      h = await b.open();
      await migrateTo0001(h.db as unknown as Kysely<unknown>);
      await sql`insert into controls_migration.runs
        (id, mode, status, options, counts, summary, tool_version, host, pid)
        values ('old', 'apply', 'failed', '{}',
          '{"source_rows_read": 120, "source_candidates": 12, "source_anomalies": 3}',
          '{"strategy": "bulk"}', '0.1.0', 'h', 1),
        ('older', 'plan', 'running', '{}', '{}', null, '0.1.0', 'h', 1)`.execute(h.db);
      await sql`insert into controls_migration.findings
        (run_id, identity_id, finding, observed_set_by, observed_is_overridable)
        values ('old', 'a', 'unexpected_client_control', 'SET_BY_CLIENT', true),
               ('old', 'b', 'unexpected_client_control', 'CLIENT', false),
               ('old', 'c', 'unexpected_service_control', 'SERVICE', true),
               ('old', 'd', 'attribute_mismatch', 'CLIENT', true)`.execute(h.db);
      const { applied } = await migrateToLatest(h.db, silentLogger);
      assert.deepEqual(applied, Object.keys(migrations).slice(1));
    });
    after(() => h.close());

    it("moves a run's source counts and strategy out of JSON into typed columns", async () => {
      const runs = await h.db
        .selectFrom(TOOL_TABLES.runs)
        .select(["id", "source_rows_read", "source_candidates", "source_anomalies", "strategy"])
        .orderBy("id")
        .execute();
      assert.deepEqual(runs, [
        {
          id: "old",
          source_rows_read: 120,
          source_candidates: 12,
          source_anomalies: 3,
          strategy: "bulk",
        },
        {
          id: "older",
          source_rows_read: null,
          source_candidates: null,
          source_anomalies: null,
          strategy: null,
        },
      ]);
    });

    it("marks prunable exactly the old findings the diff rules called prunable", async () => {
      const rows = await h.db
        .selectFrom(TOOL_TABLES.findings)
        .select(["identity_id", "prunable"])
        .orderBy("identity_id")
        .execute();
      assert.deepEqual(
        rows.map((r) => [r.identity_id, r.prunable]),
        [
          ["a", true],
          ["b", false],
          ["c", false],
          ["d", false],
        ],
      );
    });

    it("accepts the declined and discarded run statuses and still refuses unknown ones", async () => {
      for (const status of ["declined", "discarded"] as const) {
        await h.db
          .updateTable(TOOL_TABLES.runs)
          .set({ status })
          .where("id", "=", "older")
          .execute();
      }
      await assert.rejects(
        sql`update controls_migration.runs set status = 'gone' where id = 'older'`.execute(h.db),
        /check constraint/,
      );
    });
  });
}
