/**
 * Issue 50 §6: the ledger knows every action a flag asks for. `reconcile --prune-orphans` deletes
 * the controls this tool created on identities whose source row is gone, and its books balance:
 * it exits 0 (or 2 for other findings), never 4, and its summary carries no `ledger_error`.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { backends } from "../helpers/db.ts";
import { type ReadWorld, type Row, readWorld, summaryOf, worldIds } from "../helpers/read-world.ts";

const IDS = worldIds(8, 5005);
const ROWS: Row[] = IDS.map((id) => [id, true, false]);
const GONE = IDS.slice(0, 2);

for (const backend of backends) {
  describe(`reconcile --prune-orphans on ${backend.name}`, { timeout: 300_000 }, () => {
    let w: ReadWorld;
    before(async () => {
      w = await readWorld(backend, ROWS);
    });
    after(async () => {
      await w.close();
    });

    for (const extra of [[], ["--prune"]]) {
      it(`deletes the orphaned own controls${extra.length ? " beside --prune" : ""} and exits 0 with balanced books, never 4`, async () => {
        const applied = await w.run("apply", "--state", "bulk");
        assert.equal(applied.code, 0, applied.stderr.slice(-3000));
        const h = await w.target.open({ migrate: false });
        try {
          for (const id of GONE) await sql`delete from identities where id = ${id}`.execute(h.db);
        } finally {
          await h.close();
        }
        const r = await w.run("reconcile", "--state", "bulk", "--prune-orphans", ...extra);
        const s = summaryOf(r);
        assert.ok(r.code === 0 || r.code === 2, `exit ${r.code}: ${r.stderr.slice(-3000)}`);
        assert.equal(s.ledger_error ?? null, null);
        assert.equal(s.findings.orphaned_own_control, 2);
        assert.equal(s.outcomes["succeeded:deleted"], 2, JSON.stringify(s.outcomes));
        for (const id of GONE) {
          assert.equal(w.sandbox.controlsOf(id).length, 0, `${id} keeps no control`);
        }
        // The next round starts with both rows back in the source.
        const back = await w.target.open({ migrate: false });
        try {
          for (const id of GONE) {
            await sql`insert into identities values (${id}, true, false)`.execute(back.db);
          }
        } finally {
          await back.close();
        }
      });
    }
  });
}
