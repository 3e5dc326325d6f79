/**
 * PGlite 0.4 answers a statement binding 32,768 parameters or more with no rows and no error, and
 * its session then answers every later statement with no rows: a run would conclude from reads
 * that read nothing. The tool's PGlite thread refuses such a statement before sending it.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { PGLITE_MAX_PARAMETERS } from "../../src/db/connection/pglite-thread.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";

const pglite = backends.find((b) => b.name === "pglite");
assert.ok(pglite, "PGlite is always among the test backends");

/** `select` of the length of an array built from `n` bound parameters. */
const arrayOf = (n: number) =>
  sql<{ n: number }>`select array_length(array[${sql.join(
    Array.from({ length: n }, (_, i) => sql`${i}::int`),
  )}], 1) as n`;

describe("a statement's parameters on PGlite", () => {
  let h: TestDatabase;
  before(async () => {
    h = await (pglite as NonNullable<typeof pglite>).open({ migrate: false });
  });
  after(async () => {
    await h.close();
  });

  it("runs a statement binding the most parameters PGlite answers, 32,767", async () => {
    assert.equal(PGLITE_MAX_PARAMETERS, 32_767);
    const r = await arrayOf(PGLITE_MAX_PARAMETERS).execute(h.db);
    assert.deepEqual(r.rows, [{ n: 32_767 }]);
  });

  it("refuses a statement binding 32,768, naming the count, and the next statement still answers", async () => {
    await assert.rejects(
      arrayOf(PGLITE_MAX_PARAMETERS + 1).execute(h.db),
      /binds 32768 parameters, over PGlite's 32767: not sent/,
    );
    const r = await sql<{ x: number }>`select 1 as x`.execute(h.db);
    assert.deepEqual(r.rows, [{ x: 1 }]);
  });
});
