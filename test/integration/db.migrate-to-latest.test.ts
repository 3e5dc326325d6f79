import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { migrations } from "../../migrations/index.ts";
import { ensureSchema, migrateToLatest } from "../../src/db/connection/migrate.ts";
import { TOOL_TABLES } from "../../src/db/schema.ts";
import { UserError } from "../../src/errors.ts";
import { silentLogger } from "../../src/log.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";

/** Every migration the code knows, in the order they apply. */
const ALL = Object.keys(migrations);

/** The columns the pipeline codes against (BRIEF: exact names). */
const EXPECTED_COLUMNS: Record<string, string[]> = {
  runs: [
    "id",
    "mode",
    "status",
    "parent_run_id",
    "started_at",
    "finished_at",
    "heartbeat_at",
    "options",
    "counts",
    "summary",
    "exit_code",
    "tool_version",
    "host",
    "pid",
    "source_rows_read",
    "source_candidates",
    "source_anomalies",
    "strategy",
    "error",
    "dry_run",
    "source_relation",
    "source_oid",
    "source_database",
    "platform_key",
    "closing_sends",
    "since_at",
    "since_run_id",
    "view_run_id",
  ],
  source_rows: [
    "run_id",
    "seq",
    "identity_id",
    "user_disabled",
    "admin_disabled",
    "anomaly",
    "anomaly_detail",
    "valid",
  ],
  snapshot_identities: [
    "run_id",
    "identity_id",
    "status",
    "error",
    "observed_at",
    "platform_user_disabled",
    "platform_admin_disabled",
    "observed_via",
    "observed_run_id",
  ],
  listed_identities: ["run_id", "identity_id"],
  listed_claims: ["run_id", "identity_id", "batch"],
  listed_bare: ["run_id", "chunk", "uuids", "others"],
  snapshot_controls: [
    "run_id",
    "identity_id",
    "control_id",
    "type",
    "set_by",
    "set_by_raw",
    "is_overridable",
    "reason_code",
    "reason",
    "created_at",
    "deleted_at",
  ],
  findings: [
    "id",
    "run_id",
    "identity_id",
    "finding",
    "user_disabled",
    "admin_disabled",
    "expected_type",
    "expected_set_by",
    "expected_is_overridable",
    "observed_control_id",
    "observed_set_by",
    "observed_is_overridable",
    "other_active_controls",
    "detail",
    "prunable",
    "platform_user_disabled",
    "platform_admin_disabled",
  ],
  actions: [
    "id",
    "run_id",
    "identity_id",
    "finding_id",
    "action",
    "control_type",
    "control_key",
    "status",
    "outcome",
    "attempts",
    "http_status",
    "error",
    "result_control_id",
    "created_at",
    "updated_at",
  ],
  request_series: ["run_id", "at", "requests", "rate_limited", "retries", "ambiguous"],
  run_controls: [
    "run_id",
    "paused",
    "rate_budget",
    "version",
    "applied_version",
    "applied_at",
    "report",
    "reported_at",
  ],
  run_events: ["id", "run_id", "at", "kind", "rate", "who", "pid", "detail"],
  platform_wait_sightings: ["identity_id", "flag", "first_seen_at", "run_id", "platform_key"],
  world_changes: [
    "run_id",
    "since_run_id",
    "identity_id",
    "kind",
    "control_id",
    "set_by",
    "detail",
    "undone",
    "seen_at",
  ],
  carried_findings: [
    "run_id",
    "identity_id",
    "finding",
    "owner",
    "legacy_unread",
    "seen_by_run_id",
  ],
  source_id_sets: ["id", "source", "run_id", "refreshed_at", "platform_key"],
  source_ids: ["set_id", "h"],
};

for (const b of backends) {
  describe(`migrateToLatest on ${b.name}`, () => {
    let h: TestDatabase;
    before(async () => {
      h = await b.open();
    });
    after(() => h.close());

    it("applies every migration in order on an empty database and nothing the second time", async () => {
      assert.deepEqual(await migrateToLatest(h.db, silentLogger), {
        applied: ALL,
        known: ALL.length,
      });
      assert.deepEqual(await migrateToLatest(h.db, silentLogger), {
        applied: [],
        known: ALL.length,
      });
      assert.deepEqual(await ensureSchema(h.db, silentLogger), { applied: [], known: ALL.length });
    });

    it("creates every table in schema controls_migration with the agreed columns", async () => {
      const rows = await sql<{ table_name: string; column_name: string }>`
        select table_name, column_name from information_schema.columns
        where table_schema = 'controls_migration' order by table_name, ordinal_position`
        .execute(h.db)
        .then((r) => r.rows);
      for (const [table, columns] of Object.entries(EXPECTED_COLUMNS)) {
        const actual = rows.filter((r) => r.table_name === table).map((r) => r.column_name);
        assert.deepEqual(actual, columns, table);
      }
      const tracking = rows.filter((r) => r.table_name.startsWith("kysely_migration"));
      assert.ok(tracking.length > 0, "the tracking and lock tables live in controls_migration too");
    });

    it("keeps no foreign key to runs on the bulk per-run tables, and keeps the small tables' ones", async () => {
      const r = await sql<{ table: string }>`
        select c.conrelid::regclass::text as table from pg_constraint c
        where c.contype = 'f' and c.confrelid = 'controls_migration.runs'::regclass
        order by 1`.execute(h.db);
      assert.deepEqual(
        r.rows.map((x) => x.table),
        [
          "controls_migration.request_series",
          "controls_migration.run_controls",
          "controls_migration.run_events",
          "controls_migration.runs",
          "controls_migration.world_changes",
        ],
      );
    });

    it("returns bigint ids and counts as numbers", async () => {
      await h.db
        .insertInto(TOOL_TABLES.runs)
        .values({
          id: "r1",
          mode: "plan",
          status: "running",
          options: "{}",
          tool_version: "t",
          host: "h",
          pid: 1,
        })
        .execute();
      const inserted = await h.db
        .insertInto(TOOL_TABLES.findings)
        .values({ run_id: "r1", finding: "in_sync" })
        .returning("id")
        .executeTakeFirstOrThrow();
      assert.equal(typeof inserted.id, "number");
      const count = await h.db
        .selectFrom(TOOL_TABLES.findings)
        .select((e) => e.fn.countAll().as("n"))
        .executeTakeFirstOrThrow();
      assert.equal(count.n, 1);
    });

    it("rejects a status outside the agreed set", async () => {
      await assert.rejects(
        h.db
          .insertInto(TOOL_TABLES.actions)
          .values({
            run_id: "r1",
            identity_id: "i",
            action: "create",
            control_type: "SELL_ONLY",
            control_key: "SELL_ONLY:client",
            // @ts-expect-error the type forbids it; the CHECK constraint refuses it at runtime too
            status: "done",
          })
          .execute(),
        /check constraint/,
      );
    });

    it("refuses a database whose schema is newer than the code, naming the upgrade", async () => {
      await sql`insert into controls_migration.kysely_migration (name, timestamp)
                values ('9999_from_the_future', now()::text)`.execute(h.db);
      for (const fn of [migrateToLatest, ensureSchema]) {
        await assert.rejects(
          fn(h.db, silentLogger),
          (err: Error) =>
            err instanceof UserError &&
            /newer than this controls-migrate/.test(err.message) &&
            /9999_from_the_future/.test(err.message) &&
            /Upgrade/.test(err.message),
        );
      }
      await sql`delete from controls_migration.kysely_migration where name = '9999_from_the_future'`.execute(
        h.db,
      );
    });
  });
}

const postgres = backends.find((b) => b.name === "postgres");
describe("migrateToLatest with two processes at once on postgres", {
  skip: postgres ? false : "needs TEST_DATABASE_URL (a PostgreSQL server)",
}, () => {
  it("applies each migration exactly once when two migrators race", async () => {
    const target = await postgres!.target();
    const [a, c] = [await target.open(), await target.open()];
    try {
      const results = await Promise.all([
        migrateToLatest(a.db, silentLogger),
        migrateToLatest(c.db, silentLogger),
      ]);
      const applied = results.flatMap((r) => r.applied);
      assert.deepEqual(applied, ALL);
    } finally {
      await a.close();
      await c.close();
      await target.drop();
    }
  });
});
