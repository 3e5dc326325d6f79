import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import type { DatabaseHandle } from "../../src/db/connection/connect.ts";
import { PgliteError } from "../../src/db/connection/pglite-thread.ts";
import { backends } from "../helpers/db.ts";

const pglite = backends.find((b) => b.name === "pglite") as (typeof backends)[number];

describe("PGlite in its worker thread", () => {
  let h: DatabaseHandle;

  before(async () => {
    h = await pglite.open();
    await sql`create table t (id int primary key)`.execute(h.db);
    await sql`insert into t select g from generate_series(1, 5000) g`.execute(h.db);
  });
  after(async () => {
    await h.close();
  });

  it("keeps the event loop free while a long statement runs: 20 turns of the loop pass before it ends", async () => {
    let ended = false;
    const statement =
      sql`select count(*) from generate_series(1, 3000000) a, lateral (select a % 7) b`
        .execute(h.db)
        .then(() => {
          ended = true;
        });
    // In the main thread the statement would hold the loop: it would end before any turn.
    let turns = 0;
    while (turns < 20 && !ended) {
      await new Promise((r) => setImmediate(r));
      turns += 1;
    }
    assert.equal(ended, false, `the statement ended after ${turns} turns of the event loop`);
    await statement;
  });

  it("parses array columns as PGlite does, element types included, and leaves a same-named text column alone", async () => {
    const r = await sql<Record<string, unknown>>`select
        array[1, 2]::int[] as ints, '{x,NULL,"a,b"}'::text[] as texts,
        array[true, false] as bools, '{{1,2},{3,4}}'::int[][] as grid,
        array['2020-01-02T03:04:05Z'::timestamptz] as times, array['{"k":1}'::jsonb] as docs,
        null::int[] as none, '{}'::int[] as empty, 'plain' as word,
        array[7] as twice, '{8}' as twice`.execute(h.db);
    const row = r.rows[0] as Record<string, unknown>;
    assert.deepEqual(row.ints, [1, 2]);
    assert.deepEqual(row.texts, ["x", null, "a,b"]);
    assert.deepEqual(row.bools, [true, false]);
    assert.deepEqual(row.grid, [
      [1, 2],
      [3, 4],
    ]);
    assert.deepEqual(row.times, [new Date("2020-01-02T03:04:05Z")]);
    assert.deepEqual(row.docs, [{ k: 1 }]);
    assert.equal(row.none, null);
    assert.deepEqual(row.empty, []);
    assert.equal(row.word, "plain");
    // The row keeps the last column of a name: text here, not parsed as the array before it.
    assert.equal(row.twice, "{8}");
  });

  it("answers a refused statement with PostgreSQL's SQLSTATE", async () => {
    await assert.rejects(sql`insert into t values (1)`.execute(h.db), (err) => {
      assert.ok(err instanceof PgliteError);
      assert.equal(err.code, "23505");
      assert.equal(err.constraint, "t_pkey");
      return true;
    });
  });

  it("streams a result in chunks, and a consumer that stops early leaves the database usable", async () => {
    let seen = 0;
    for await (const _ of h.db
      .selectFrom("t" as never)
      .selectAll()
      .stream(100)) {
      if (++seen === 250) break;
    }
    assert.equal(seen, 250);
    let all = 0;
    for await (const _ of h.db
      .selectFrom("t" as never)
      .selectAll()
      .stream(1000))
      all++;
    assert.equal(all, 5000);
    const r = await sql<{ n: number }>`select count(*)::int as n from t`.execute(h.db);
    assert.equal(r.rows[0]?.n, 5000);
  });
});
