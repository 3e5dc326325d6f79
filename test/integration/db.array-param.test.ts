/**
 * Array parameters bound as PostgreSQL's array text (`arrayParam`, `unnest-insert.ts`): every
 * value a batch write sends comes back from the database as it was given, quotes, backslashes,
 * braces, commas, blanks, the word NULL and non-ASCII text included, on every backend; and the
 * driver is handed one string a column, not an array to convert.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { arrayLiteral, arrayParam } from "../../src/db/journal/unnest-insert.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";

/** Strings that array text treats specially, unquoted or unescaped. */
const AWKWARD = [
  "plain",
  "",
  " ",
  "NULL",
  "null",
  'say "hi"',
  "back\\slash",
  "\\\\",
  '\\"',
  "{braces}",
  "a,b",
  "tab\tand\nnewline",
  "é ü 中文 🙂",
  "6a591c0c-3e0f-4494-8559-5dc864060d39",
];

describe("arrayLiteral", () => {
  it("quotes every string and escapes only backslashes and double quotes", () => {
    assert.equal(arrayLiteral(["x", 'say "hi"', "a\\b"]), '{"x","say \\"hi\\"","a\\\\b"}');
  });

  it("writes null and undefined as NULL, booleans as t and f, numbers and bigints as digits", () => {
    assert.equal(
      arrayLiteral([null, undefined, true, false, 3, -7, 12n]),
      "{NULL,NULL,t,f,3,-7,12}",
    );
  });

  it("writes a Date as its ISO instant, quoted", () => {
    const at = new Date(Date.UTC(2026, 10, 30, 1, 2, 3, 456));
    assert.equal(arrayLiteral([at]), '{"2026-11-30T01:02:03.456Z"}');
  });

  it("writes an empty list as an empty array", () => {
    assert.equal(arrayLiteral([]), "{}");
  });
});

for (const backend of backends) {
  describe(`array parameters on ${backend.name}`, () => {
    let h: TestDatabase;
    before(async () => {
      h = await backend.open({ migrate: false });
    });
    after(async () => {
      await h.close();
    });

    it("reads back every awkward string, and NULL as null, in order", async () => {
      const values = [...AWKWARD, null];
      const r = await sql<{ v: string | null; n: number }>`
        select v, n::int as n from unnest(${arrayParam(values, "text")}) with ordinality as u(v, n)
        order by n`.execute(h.db);
      assert.equal(r.rows.length, values.length);
      assert.deepEqual(
        r.rows.map((x) => x.v),
        values,
      );
    });

    it("reads back booleans, integers past 32 bits and instants as their own types", async () => {
      const at = new Date(Date.UTC(2026, 10, 30, 1, 2, 3, 456));
      const r = await sql<{ b: boolean | null; i: string; t: Date }>`
        select b, i::text as i, t from unnest(
          ${arrayParam([true, false, null], "bool")},
          ${arrayParam([1, 2n ** 40n, -5], "int8")},
          ${arrayParam([at, at.toISOString(), "2026-11-30 02:02:03.456+01"], "timestamptz")}
        ) as u(b, i, t)`.execute(h.db);
      assert.equal(r.rows.length, 3);
      assert.deepEqual(
        r.rows.map((x) => x.b),
        [true, false, null],
      );
      assert.deepEqual(
        r.rows.map((x) => x.i),
        ["1", String(2n ** 40n), "-5"],
      );
      for (const row of r.rows) assert.equal(new Date(row.t).getTime(), at.getTime());
    });

    it("binds one string a column: the statement's parameter is the array's text", async () => {
      const compiled = sql`select * from unnest(${arrayParam(["a", "b"], "text")}) as u(v)`.compile(
        h.db,
      );
      assert.equal(compiled.parameters.length, 1);
      assert.equal(compiled.parameters[0], '{"a","b"}');
      assert.match(compiled.sql, /\$1::text\[\]/);
    });
  });
}
