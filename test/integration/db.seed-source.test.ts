import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Kysely, sql } from "kysely";
import { loadSourceConfig, type SourceConfig } from "../../src/config.ts";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { seedSource } from "../../src/db/source/seed.ts";
import { readSource, type SourceRow } from "../../src/db/source/source-reader.ts";
import { UserError } from "../../src/errors.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";

// biome-ignore lint/suspicious/noExplicitAny: fixtures are the user's tables, outside our types
type AnyDb = Kysely<any>;

const config = (over: Partial<SourceConfig> = {}): SourceConfig => ({
  ...loadSourceConfig({}, {}),
  ...over,
});

async function readAll(db: AnyDb, source: SourceConfig): Promise<SourceRow[]> {
  const out: SourceRow[] = [];
  for await (const batch of readSource(db, source)) out.push(...batch.rows);
  return out;
}

for (const b of backends) {
  describe(`seedSource on ${b.name}`, () => {
    let h: TestDatabase;
    let db: AnyDb;
    before(async () => {
      h = await b.open();
      db = h.db as AnyDb;
    });
    after(() => h.close());

    it("creates the default table and writes exactly the synthetic identities of the seed", async () => {
      const result = await seedSource(db, config(), { identities: 500, seed: 3 });
      assert.equal(result.created, true);
      assert.equal(result.relation, "public.identities");
      assert.equal(result.rowsWritten, 500);
      const rows = await readAll(db, config());
      const expected = [...syntheticIdentities(500, 3)]
        .map((s) => JSON.stringify([s.id, s.user_disabled, s.admin_disabled]))
        .sort();
      assert.deepEqual(
        rows.map((r) => JSON.stringify([r.identityId, r.userDisabled, r.adminDisabled])).sort(),
        expected,
      );
      assert.ok(rows.every((r) => r.valid && r.anomaly === null));
    });

    it("refuses to add to a table that already has rows unless told to truncate", async () => {
      await assert.rejects(
        seedSource(db, config(), { identities: 10, seed: 4 }),
        (err: Error) =>
          err instanceof UserError &&
          /already holds 500 rows/.test(err.message) &&
          /--truncate/.test(err.message),
      );
      const replaced = await seedSource(db, config(), { identities: 10, seed: 4, truncate: true });
      assert.equal(replaced.created, false);
      assert.equal(replaced.truncated, 500);
      assert.equal((await readAll(db, config())).length, 10);
    });

    it("honours a schema-qualified relation and renamed columns, but never invents a schema", async () => {
      const source = config({
        relation: "legacy.people",
        idColumn: "uid",
        userDisabledColumn: "ud",
        adminDisabledColumn: "ad",
      });
      await assert.rejects(
        seedSource(db, source, { identities: 5, seed: 1 }),
        (err: Error) =>
          err instanceof UserError &&
          /Schema "legacy"/.test(err.message) &&
          /--source-relation/.test(err.message),
      );
      await sql`create schema legacy`.execute(db);
      const result = await seedSource(db, source, { identities: 5, seed: 1, withAnomalies: true });
      assert.equal(result.relation, "legacy.people");
      const columns = await sql<{ column_name: string }>`
        select column_name from information_schema.columns
        where table_schema = 'legacy' and table_name = 'people' order by ordinal_position`.execute(
        db,
      );
      assert.deepEqual(
        columns.rows.map((c) => c.column_name),
        ["uid", "ud", "ad", "created_at"],
      );
      const rows = await readAll(db, source);
      const kinds = new Set(rows.map((r) => r.anomaly).filter((k) => k !== null));
      assert.deepEqual([...kinds].sort(), Object.keys(result.anomalies).sort());
      assert.ok(kinds.size >= 7, "every kind the seeder knows is present");
    });

    it("fills an existing uuid/smallint table, adding only the anomalies a uuid column can hold", async () => {
      await sql`create table typed (id uuid, user_disabled smallint, admin_disabled text)`.execute(
        db,
      );
      const source = config({ relation: "typed" });
      const result = await seedSource(db, source, {
        identities: 200,
        seed: 9,
        withAnomalies: true,
      });
      assert.deepEqual(Object.keys(result.anomalies).sort(), [
        "duplicate_id",
        "null_flag",
        "null_id",
      ]);
      const stored = await sql<{
        ud: number | null;
      }>`select user_disabled as ud from typed where user_disabled is not null limit 1`.execute(db);
      assert.equal(typeof stored.rows[0]?.ud, "number");
      const rows = await readAll(db, source);
      const clean = rows.filter((r) => r.anomaly === null);
      assert.equal(clean.length, 200);
      const c = result.combinations;
      assert.equal(clean.filter((r) => r.userDisabled && r.adminDisabled).length, c.both);
      assert.equal(clean.filter((r) => r.userDisabled && !r.adminDisabled).length, c.userOnly);
    });
  });
}
