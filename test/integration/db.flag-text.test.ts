/**
 * Source flags are read exactly as PostgreSQL reads a boolean's text form: the tool's reading
 * (`parseFlagText`, used on every row) and its SQL count (`flagTextIsTrue`) are compared with the
 * database's own `text::boolean` on each backend, for fixed cases and generated ones.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { sql } from "kysely";
import { flagTextIsTrue, parseFlagText } from "../../src/db/source/flag-text.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";

const FIXED = [
  ...["true", "t", "TRUE", " TRUE ", "yes", "y", "on", "1", "tr", "Tru", "ye", "\ttrue\n"],
  ...["false", "f", "fa", "fals", "No", "n", "off", "of", "OFF", "0", "\u000bfalse\f"],
  ...[
    "",
    " ",
    "o",
    "2",
    "-1",
    "truex",
    "yess",
    "onn",
    "\u00a0true",
    "true\u3000",
    "ｔｒｕｅ",
    "0 0",
  ],
];
const ALPHABET = [..."tTrRuUeEfFaAlLsSyYnNoO01x ", "\t", "\n", "\u000b", "\f", "\r", "\u00a0"];

for (const backend of backends) {
  describe(`source flag text on ${backend.name}`, () => {
    let h: TestDatabase;
    before(async () => {
      h = await backend.open();
      await sql`create function as_bool(t text) returns boolean language plpgsql as $$
        begin return t::boolean; exception when invalid_text_representation then return null; end
        $$`.execute(h.db);
    });
    after(() => h.close());

    /** What PostgreSQL and the tool's SQL make of each text: [pg's boolean or null, sql says true]. */
    async function readByPostgres(
      texts: string[],
    ): Promise<Map<string, [boolean | null, boolean]>> {
      const rows = await sql<{ t: string; pg: boolean | null; ours: boolean }>`
        select t, as_bool(t) as pg, ${flagTextIsTrue(sql.ref("t"))} as ours
        from unnest(${texts}::text[]) as t`.execute(h.db);
      return new Map(rows.rows.map((r) => [r.t, [r.pg, r.ours]]));
    }

    it("parseFlagText gives PostgreSQL's own boolean for every fixed case ('yes', 'of', ' TRUE ' true or false as PostgreSQL says; '2', 'o', a no-break space refused)", async () => {
      const pg = await readByPostgres(FIXED);
      assert.equal(pg.size, new Set(FIXED).size);
      for (const t of FIXED) {
        const expected = pg.get(t)?.[0];
        assert.equal(parseFlagText(t) ?? null, expected, JSON.stringify(t));
      }
      // The cases the issue names, pinned: PostgreSQL reads them as true.
      for (const t of ["yes", "on", "t", " TRUE "]) assert.equal(pg.get(t)?.[0], true, t);
      for (const t of ["2", "o", "\u00a0true"]) assert.equal(pg.get(t)?.[0], null, t);
    });

    it("parseFlagText and the SQL count's test agree with PostgreSQL on 3000 generated texts of flag letters, digits and whitespace", async () => {
      const texts = [
        ...new Set(
          fc
            .sample(fc.array(fc.constantFrom(...ALPHABET), { maxLength: 7 }), {
              numRuns: 3000,
              seed: 28,
            })
            .map((cs) => cs.join("")),
        ),
      ];
      const pg = await readByPostgres(texts);
      assert.ok(texts.length > 1000, `only ${texts.length} distinct texts`);
      let booleans = 0;
      for (const t of texts) {
        const [expected, sqlTrue] = pg.get(t) ?? [undefined, undefined];
        assert.equal(parseFlagText(t) ?? null, expected, JSON.stringify(t));
        assert.equal(sqlTrue, expected === true, `SQL count on ${JSON.stringify(t)}`);
        if (expected !== null) booleans += 1;
      }
      assert.ok(booleans > 20, `only ${booleans} generated texts were booleans`);
    });
  });
}
