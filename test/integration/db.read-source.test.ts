import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Kysely, sql } from "kysely";
import { loadSourceConfig, type SourceConfig } from "../../src/config.ts";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { seedSource } from "../../src/db/source/seed.ts";
import {
  ANOMALY_KINDS,
  countSource,
  lookupSourceRows,
  readSource,
  type SourceRow,
} from "../../src/db/source/source-reader.ts";
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

/** Multiset of (id, flags) as sorted strings, to compare what was read with what is stored. */
const keyOf = (r: {
  identityId?: string | null;
  id?: string | null;
  ud?: unknown;
  ad?: unknown;
  userDisabled?: unknown;
  adminDisabled?: unknown;
}) =>
  JSON.stringify([
    r.identityId ?? r.id ?? null,
    r.userDisabled ?? r.ud ?? null,
    r.adminDisabled ?? r.ad ?? null,
  ]);

const U = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

for (const b of backends) {
  describe(`source reader on ${b.name}`, () => {
    let h: TestDatabase;
    let db: AnyDb;
    before(async () => {
      h = await b.open();
      db = h.db as AnyDb;
    });
    after(() => h.close());

    it("reads back exactly the seeded identities, per flag combination, in pages", async () => {
      const source = config({ relation: "seeded", batchSize: 1000 });
      const result = await seedSource(db, source, {
        identities: 20_000,
        seed: 7,
        withAnomalies: true,
      });
      const expected = { both: 0, userOnly: 0, adminOnly: 0, neither: 0 };
      for (const s of syntheticIdentities(20_000, 7)) {
        if (s.user_disabled && s.admin_disabled) expected.both++;
        else if (s.user_disabled) expected.userOnly++;
        else if (s.admin_disabled) expected.adminOnly++;
        else expected.neither++;
      }
      assert.deepEqual(result.combinations, expected);

      const rows = await readAll(db, source);
      assert.equal(rows.length, result.rowsWritten);
      assert.deepEqual(
        rows.map((r) => r.seq),
        rows.map((_, i) => i + 1),
      );
      const clean = rows.filter((r) => r.anomaly === null);
      const got = { both: 0, userOnly: 0, adminOnly: 0, neither: 0 };
      for (const r of clean) {
        if (r.userDisabled && r.adminDisabled) got.both++;
        else if (r.userDisabled) got.userOnly++;
        else if (r.adminDisabled) got.adminOnly++;
        else got.neither++;
      }
      assert.deepEqual(got, expected);
      const kinds: Record<string, number> = {};
      for (const r of rows) if (r.anomaly) kinds[r.anomaly] = (kinds[r.anomaly] ?? 0) + 1;
      assert.deepEqual(kinds, result.anomalies);

      const counts = await countSource(db, source);
      assert.equal(counts.total, result.rowsWritten);
      assert.equal(counts.userDisabled, rows.filter((r) => r.userDisabled === true).length);
      assert.equal(counts.adminDisabled, rows.filter((r) => r.adminDisabled === true).length);
      assert.equal(
        counts.anyFlag,
        rows.filter((r) => r.userDisabled === true || r.adminDisabled === true).length,
      );
    });

    it("classifies every bad-row kind with its reason and still delivers every valid row", async () => {
      await sql`create table bad (id text, user_disabled boolean, admin_disabled boolean)`.execute(
        db,
      );
      const fixture: [string | null, boolean | null, boolean | null, string | null, boolean][] = [
        [U(1), true, false, null, true],
        [U(2), false, false, null, true],
        [U(3), true, true, null, true],
        [null, true, false, "null_id", false],
        ["", true, false, "empty_id", false],
        [" ", false, true, "empty_id", false],
        [`${U(4)}\r`, true, false, "control_chars_in_id", false],
        ["z".repeat(300), true, false, "id_too_long", false],
        [U(5), true, false, "duplicate_id", false],
        [U(5), false, false, "duplicate_id", false],
        [U(6), null, false, "null_flag", false],
        [U(7), false, null, "null_flag", false],
        ["legacy-7", true, false, "non_uuid_id", true],
        ["0B9F6C1E-3A52-4D7E-9C1A-2F4B6D8E0A13", true, false, "non_uuid_id", true],
        [U(9), false, true, null, true],
      ];
      for (const [id, ud, ad] of fixture)
        await sql`insert into bad values (${id}, ${ud}, ${ad})`.execute(db);

      const rows = await readAll(db, config({ relation: "bad", batchSize: 2 }));
      assert.equal(rows.length, fixture.length);
      const remaining = [...fixture];
      for (const r of rows) {
        const i = remaining.findIndex(
          ([id, ud, ad, kind]) =>
            id === r.identityId &&
            kind === r.anomaly &&
            (kind !== null || (ud === r.userDisabled && ad === r.adminDisabled)),
        );
        assert.ok(i >= 0, `unexpected row ${JSON.stringify(r)}`);
        const [, , , kind, valid] = remaining.splice(i, 1)[0]!;
        assert.equal(r.valid, valid, `${kind} validity`);
        if (kind) assert.ok(r.anomalyDetail && kind in ANOMALY_KINDS, `${kind} has a detail`);
      }
      assert.deepEqual(remaining, []);
      assert.equal(rows.at(-1)?.anomaly, "null_id", "NULL ids come last");
    });

    it("reads every copy of ids duplicated across page boundaries, whatever the batch size", async () => {
      await sql`create table dups (id text, user_disabled boolean, admin_disabled boolean)`.execute(
        db,
      );
      await sql`create index on dups (id)`.execute(db);
      const ids = ["a", "b", "b", "b", "c", "d", "d", "e", "f", "f", "f", "f"].map(
        (x) => `${x}-${U(0)}`,
      );
      for (const id of ids) await sql`insert into dups values (${id}, true, false)`.execute(db);
      for (const batchSize of [1, 2, 3, 4, 5, 7, 100]) {
        const rows = await readAll(db, config({ relation: "dups", batchSize }));
        assert.deepEqual(
          rows.map((r) => r.identityId).sort(),
          [...ids].sort(),
          `batch ${batchSize}`,
        );
        const dup = rows.filter((r) => r.anomaly === "duplicate_id").map((r) => r.identityId![0]);
        assert.deepEqual(
          dup.sort(),
          ["b", "b", "b", "d", "d", "f", "f", "f", "f"],
          `batch ${batchSize}`,
        );
        assert.ok(rows.filter((r) => r.anomaly === "duplicate_id").every((r) => !r.valid));
      }
    });

    it("pages through many NULL ids on a table and on a view alike", async () => {
      await sql`create table nulls (id text, user_disabled boolean, admin_disabled boolean)`.execute(
        db,
      );
      const stored: { id: string | null; ud: boolean | null; ad: boolean | null }[] = [];
      for (let i = 0; i < 9; i++)
        stored.push({ id: null, ud: i % 2 === 0, ad: i % 3 === 0 ? null : false });
      stored.push({ id: null, ud: true, ad: false }, { id: null, ud: true, ad: false }); // identical rows
      stored.push({ id: U(1), ud: true, ad: false });
      for (const s of stored)
        await sql`insert into nulls values (${s.id}, ${s.ud}, ${s.ad})`.execute(db);
      await sql`create view nulls_view as select * from nulls`.execute(db);
      for (const relation of ["nulls", "nulls_view"]) {
        for (const batchSize of [1, 2, 4]) {
          const rows = await readAll(db, config({ relation, batchSize }));
          assert.deepEqual(
            rows.map(keyOf).sort(),
            stored.map(keyOf).sort(),
            `${relation} batch ${batchSize}`,
          );
        }
      }
    });

    it("pages a uuid-typed id column in its own type and looks ids up in it", async () => {
      await sql`create table uu (id uuid, user_disabled boolean, admin_disabled boolean)`.execute(
        db,
      );
      for (let i = 1; i <= 7; i++)
        await sql`insert into uu values (${U(i)}, ${i % 2 === 0}, false)`.execute(db);
      await sql`insert into uu values (${U(3)}, true, true), (null, true, false)`.execute(db);
      const source = config({ relation: "uu", batchSize: 2 });
      const rows = await readAll(db, source);
      assert.equal(rows.length, 9);
      assert.equal(rows.filter((r) => r.anomaly === "duplicate_id").length, 2);
      assert.equal(rows.filter((r) => r.valid).length, 6);

      const found = await lookupSourceRows(db, source, [
        U(2),
        U(3).toUpperCase(),
        "not-a-uuid",
        U(99),
      ]);
      assert.deepEqual([...found.keys()].sort(), [U(2), U(3)]);
      assert.equal(found.get(U(2))?.[0]?.userDisabled, true);
      assert.equal(found.get(U(3))?.length, 2);
      assert.ok(found.get(U(3))?.every((r) => r.anomaly === "duplicate_id" && !r.valid));
    });

    it("reads integer 0/1 and text true/false flags, and marks other values invalid", async () => {
      await sql`create table mixed (id varchar(64), user_disabled smallint, admin_disabled text)`.execute(
        db,
      );
      await sql`insert into mixed values (${U(1)}, 1, 'f'), (${U(2)}, 0, 'YES'), (${U(3)}, 2, 'no'), (${U(4)}, 0, 'maybe')`.execute(
        db,
      );
      const source = config({ relation: "mixed" });
      const rows = await readAll(db, source);
      const byId = new Map(rows.map((r) => [r.identityId, r]));
      assert.deepEqual(
        [byId.get(U(1))?.userDisabled, byId.get(U(1))?.adminDisabled],
        [true, false],
      );
      assert.deepEqual(
        [byId.get(U(2))?.userDisabled, byId.get(U(2))?.adminDisabled],
        [false, true],
      );
      assert.equal(byId.get(U(3))?.anomaly, "invalid_flag");
      assert.equal(byId.get(U(4))?.anomaly, "invalid_flag");
      assert.deepEqual(await countSource(db, source), {
        total: 4,
        userDisabled: 1,
        adminDisabled: 1,
        anyFlag: 2,
      });
    });

    it("follows --non-uuid-ids reject by keeping non-UUID ids away from the migration", async () => {
      const rows = await readAll(db, config({ relation: "bad", nonUuidIds: "reject" }));
      const nonUuid = rows.filter((r) => r.anomaly === "non_uuid_id");
      assert.equal(nonUuid.length, 2);
      assert.ok(nonUuid.every((r) => !r.valid));
      const accepted = await readAll(db, config({ relation: "bad", nonUuidIds: "accept" }));
      assert.equal(accepted.filter((r) => r.anomaly === "non_uuid_id").length, 0);
    });

    it("reads a schema-qualified relation with renamed columns", async () => {
      await sql`create schema legacy`.execute(db);
      await sql`create table legacy.users (uid text, blocked_by_user boolean, blocked_by_admin boolean)`.execute(
        db,
      );
      await sql`insert into legacy.users values (${U(1)}, true, false)`.execute(db);
      const rows = await readAll(
        db,
        config({
          relation: "legacy.users",
          idColumn: "uid",
          userDisabledColumn: "blocked_by_user",
          adminDisabledColumn: "blocked_by_admin",
        }),
      );
      assert.deepEqual(rows.map(keyOf), [keyOf({ id: U(1), ud: true, ad: false })]);
    });

    it("stops before reading when the relation is missing, naming it and --source-relation", async () => {
      await assert.rejects(
        readAll(db, config({ relation: "public.identitiez" })),
        (err: Error) =>
          err instanceof UserError &&
          err.message.startsWith('Relation "public.identitiez" not found') &&
          err.message.includes("--source-relation (env CONTROLS_SOURCE_RELATION)"),
      );
    });

    it("stops before reading when a column is missing, naming it, the relation and its flag", async () => {
      await assert.rejects(
        readAll(db, config({ relation: "bad", userDisabledColumn: "user_disabledd" })),
        (err: Error) => {
          assert.ok(err instanceof UserError);
          assert.ok(
            err.message.startsWith(
              'Column "user_disabledd" not found in relation "public.bad"; set it with --source-user-disabled-column (env CONTROLS_SOURCE_USER_DISABLED_COLUMN).',
            ),
            err.message,
          );
          return true;
        },
      );
      await assert.rejects(
        readAll(db, config({ relation: "bad", idColumn: "ID" })),
        (err: Error) =>
          err instanceof UserError &&
          /--source-id-column/.test(err.message) &&
          /Did you mean "id"/.test(err.message),
      );
    });

    it("refuses a flag column of a type that cannot hold a boolean, naming the flag", async () => {
      await sql`create table dated (id text, user_disabled date, admin_disabled boolean)`.execute(
        db,
      );
      await assert.rejects(
        readAll(db, config({ relation: "dated" })),
        (err: Error) =>
          err instanceof UserError &&
          /type date/.test(err.message) &&
          /--source-user-disabled-column/.test(err.message),
      );
    });

    it("treats quotes and semicolons in names as part of the name, never as SQL", async () => {
      await sql`create table victims (x int)`.execute(db);
      const table = 'we"ird; drop table victims; --';
      const column = 'i"d';
      await sql`create table ${sql.id(table)} (${sql.id(column)} text, user_disabled boolean, admin_disabled boolean)`.execute(
        db,
      );
      await sql`insert into ${sql.id(table)} values (${U(1)}, true, false), (${U(2)}, false, false)`.execute(
        db,
      );
      const rows = await readAll(db, config({ relation: table, idColumn: column, batchSize: 1 }));
      assert.equal(rows.length, 2);
      assert.equal(
        (await countSource(db, config({ relation: table, idColumn: column }))).userDisabled,
        1,
      );
      await assert.rejects(readAll(db, config({ relation: "bad; drop table victims" })), UserError);
      await assert.rejects(
        readAll(db, config({ relation: "bad", idColumn: 'id" from victims; --' })),
        UserError,
      );
      const still = await sql<{ n: number }>`select count(*) as n from victims`.execute(db);
      assert.equal(still.rows[0]?.n, 0, "victims still exists");
    });

    it("with omitClean delivers every row it cannot prove clean, as the full read classifies it, and counts the rest", async () => {
      // Text flags, so that padded, upper-case and odd spellings reach the database's filter.
      await sql`create table tricky (id text, user_disabled text, admin_disabled text)`.execute(db);
      const rows: [string | null, string | null, string | null][] = [];
      for (let i = 1; i <= 60; i++) rows.push([U(i), "false", "f"]); // clean
      rows.push([U(61), "true", "false"], [U(62), "false", "yes"]); // flagged
      rows.push([U(63), " false", "f"], [U(64), "FALSE", "NO"], [U(65), "off", "0"]);
      rows.push([U(66), "f ", "n"], [U(67), null, "f"], [U(68), "2", "f"]);
      rows.push([U(69).toUpperCase(), "f", "f"], [`${U(70)} `, "f", "f"], ["legacy-1", "f", "f"]);
      rows.push(["", "f", "f"], [null, "f", "f"], [`${U(71)}\t`, "f", "f"]);
      // Ids that only just miss the UUID shape, for the database's id test (no regular
      // expression): a backslash escape a bytea cast would decode, a dash in a hex place, a
      // two-byte letter, a letter past f.
      rows.push(["\\x303030-3030-3030-3030-303030303030", "f", "f"]);
      rows.push(["-0000000-0000-4000-8000-000000000000", "f", "f"]);
      rows.push(["00000000-0000-4000-8000-00000000000-", "f", "f"]);
      rows.push(["é0000000-0000-4000-8000-000000000000", "f", "f"]);
      rows.push(["g0000000-0000-4000-8000-000000000000", "f", "f"]);
      // Clean-looking copies: duplicates, some straddling a boundary at every small page size.
      for (const n of [10, 11, 12, 20, 21, 22, 23]) rows.push([U(n), "false", "false"]);
      rows.push([U(30), "false", "false"], [U(30), "false", "false"]);
      for (const [id, ud, ad] of rows) {
        await sql`insert into tricky values (${id}, ${ud}, ${ad})`.execute(db);
      }
      await seedSource(db, config({ relation: "seeded_omit" }), {
        identities: 3000,
        seed: 11,
        withAnomalies: true,
      });
      // A uuid id column and boolean flags take the database's cheaper tests.
      await sql`create table tricky_uuid (id uuid, user_disabled boolean, admin_disabled boolean)`.execute(
        db,
      );
      for (let i = 1; i <= 40; i++) {
        const flags = i % 7 === 0 ? [true, false] : i % 11 === 0 ? [false, null] : [false, false];
        await sql`insert into tricky_uuid values (${U(i)}, ${flags[0]}, ${flags[1]})`.execute(db);
      }
      await sql`insert into tricky_uuid values (${U(3)}, false, false), (null, false, false)`.execute(
        db,
      );
      // A view has no storage order: it is read by id ranges instead.
      await sql`create view tricky_view as select * from tricky`.execute(db);
      for (const [relation, batchSize] of [
        ["tricky_uuid", 4],
        ["tricky_view", 1],
        ["tricky_view", 4],
        ["tricky", 1],
        ["tricky", 3],
        ["tricky", 1000],
        ["seeded_omit", 7],
        ["seeded_omit", 500],
      ] as const) {
        const source = config({ relation, batchSize });
        const full = await readAll(db, source);
        const kept: SourceRow[] = [];
        let rowsRead = 0;
        for await (const batch of readSource(db, source, { omitClean: true })) {
          kept.push(...batch.rows);
          rowsRead += batch.rowsRead;
        }
        const what = `${relation} in pages of ${batchSize}`;
        assert.equal(rowsRead, full.length, `${what}: every row counted`);
        const matters = (r: SourceRow) =>
          r.anomaly !== null || r.userDisabled === true || r.adminDisabled === true;
        // A table is read in storage order, so seq differs from the full read's id order: compare
        // each id's rows (copies included) as a group, and check seq numbers every row once.
        const groups = (list: SourceRow[]) => {
          const out = new Map<string, string[]>();
          for (const { seq: _, ...row } of list) {
            const key = String(row.identityId);
            out.set(key, [...(out.get(key) ?? []), JSON.stringify(row)]);
          }
          return [...out].map(([id, rows]) => [id, rows.sort()]).sort();
        };
        const seqs = kept.map((r) => r.seq);
        assert.equal(new Set(seqs).size, seqs.length, `${what}: one seq a row`);
        assert.ok(
          seqs.every((q) => q >= 1 && q <= full.length),
          `${what}: seqs within the rows`,
        );
        const ids = new Set(kept.map((r) => String(r.identityId)));
        assert.deepEqual(
          groups(kept.filter((r) => r.identityId !== null)),
          groups(full.filter((r) => r.identityId !== null && ids.has(r.identityId))),
          `${what}: rows as the full read classifies them`,
        );
        assert.deepEqual(
          groups(kept.filter(matters)),
          groups(full.filter(matters)),
          `${what}: every row that matters delivered`,
        );
        // The id-order pages always send their last row (it carries the page's end), so there
        // pages of 1 send all.
        if (batchSize > 1) assert.ok(kept.length < full.length, `${what}: clean rows stay behind`);
      }
    });

    it("stops between pages when the signal is aborted", async () => {
      const controller = new AbortController();
      let batches = 0;
      await assert.rejects(async () => {
        for await (const _ of readSource(db, config({ relation: "seeded", batchSize: 100 }), {
          signal: controller.signal,
        })) {
          batches++;
          controller.abort(new Error("stop here"));
        }
      }, /stop here/);
      assert.equal(batches, 1);
    });
  });
}
