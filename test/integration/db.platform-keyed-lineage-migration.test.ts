/**
 * Migration 0016: a source id set, keyed by API URL and source until then, takes the platform key
 * of the run whose read it holds; a set held by a run that recorded no key (an older version's)
 * is dropped with its ids, since no one can say which platform it belongs to.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Kysely, Migrator, sql } from "kysely";
import { migrations } from "../../migrations/index.ts";
import { migrateToLatest } from "../../src/db/connection/migrate.ts";
import { TOOL_SCHEMA } from "../../src/db/schema.ts";
import { silentLogger } from "../../src/log.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";

/** A database as the migrations before 0016 left it. */
async function migrateToBefore0016(db: Kysely<unknown>): Promise<void> {
  await sql`create schema if not exists ${sql.id(TOOL_SCHEMA)}`.execute(db);
  const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < "0016"));
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => before },
    migrationTableSchema: TOOL_SCHEMA,
  });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
}

for (const b of backends) {
  describe(`migration 0016_platform_keyed_lineage on ${b.name}`, () => {
    let h: TestDatabase;
    before(async () => {
      h = await b.open();
      await migrateToBefore0016(h.db as unknown as Kysely<unknown>);
      await sql`insert into controls_migration.runs (id, mode, status, tool_version, host, pid, platform_key)
        values ('keyed', 'reconcile', 'completed', '0.1.0', 'h', 1, 'https://a|https://t|c'),
               ('keyless', 'reconcile', 'completed', '0.1.0', 'h', 1, null)`.execute(h.db);
      await sql`insert into controls_migration.source_id_sets (id, api_url, source, run_id)
        values (1, 'https://a', '{"relation": "identities"}', 'keyed'),
               (2, 'https://a', '{"relation": "other"}', 'keyless')`.execute(h.db);
      await sql`insert into controls_migration.source_ids (set_id, h)
        values (1, 11), (1, 12), (2, 21)`.execute(h.db);
      const { applied } = await migrateToLatest(h.db, silentLogger);
      assert.deepEqual(
        applied,
        Object.keys(migrations).filter((name) => name >= "0016"),
      );
    });
    after(() => h.close());

    it("gives a set its run's platform key and drops the set of a run that recorded none, with its ids", async () => {
      const sets = await sql<{ id: number; platform_key: string; run_id: string }>`
        select id, platform_key, run_id from controls_migration.source_id_sets order by id`.execute(
        h.db,
      );
      assert.deepEqual(sets.rows, [
        { id: 1, platform_key: "https://a|https://t|c", run_id: "keyed" },
      ]);
      const ids = await sql<{ set_id: number; h: string }>`
        select set_id, h::text as h from controls_migration.source_ids order by h`.execute(h.db);
      assert.deepEqual(ids.rows, [
        { set_id: 1, h: "11" },
        { set_id: 1, h: "12" },
      ]);
    });

    it("keeps one set per platform key and source: two platforms of one API URL may each hold one", async () => {
      await sql`insert into controls_migration.source_id_sets (id, platform_key, source, run_id)
        values (3, 'https://a|https://t|other-client', '{"relation": "identities"}', 'keyed')`.execute(
        h.db,
      );
      await assert.rejects(
        sql`insert into controls_migration.source_id_sets (id, platform_key, source, run_id)
          values (4, 'https://a|https://t|c', '{"relation": "identities"}', 'keyed')`.execute(h.db),
        /source_id_sets_platform_key_source_key/,
      );
    });
  });
}
