/**
 * Issue 50 §7: contested, told once. An identity whose control the outside removed twice after the
 * tool created it is contested; `reconcile --force-contested` writes it anyway, and its summary
 * says how many it forced, with none left; the next reconcile never counts those forced writes as
 * resolved findings.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { backends } from "../helpers/db.ts";
import { type ReadWorld, type Row, readWorld, summaryOf, worldIds } from "../helpers/read-world.ts";

const IDS = worldIds(4, 5009);
const ROWS: Row[] = IDS.map((id) => [id, true, false]);
const CONTESTED = IDS[0] ?? "";

/** The outside removes the contested identity's SELL_ONLY (the tool's). */
function removeItsControl(w: ReadWorld): void {
  for (const c of w.sandbox.controlsOf(CONTESTED)) {
    if (c.type === "SELL_ONLY") w.sandbox.deleteControl(c.id);
  }
}

for (const backend of backends) {
  describe(`--force-contested on ${backend.name}`, { timeout: 300_000 }, () => {
    let w: ReadWorld;
    before(async () => {
      w = await readWorld(backend, ROWS);
    });
    after(async () => {
      await w.close();
    });

    it("says how many contested identities it forced, leaves none, and the next run resolves none of them", async () => {
      assert.equal((await w.run("apply", "--state", "bulk")).code, 0);
      removeItsControl(w);
      assert.equal((await w.run("reconcile", "--state", "bulk")).code !== 4, true);
      removeItsControl(w);
      const held = await w.run("reconcile", "--state", "bulk");
      assert.equal(summaryOf(held).findings.contested, 1, held.stderr.slice(-3000));
      const forced = await w.run("reconcile", "--state", "bulk", "--force-contested");
      const f = summaryOf(forced);
      assert.equal(f.findings.contested, 1, forced.stderr.slice(-3000));
      assert.equal(f.findings_left?.contested, 0);
      assert.equal(f.actions_by_finding?.contested?.["forced (--force-contested)"], 1);
      assert.match(forced.md, /\| `contested` \| 1 \| 0 \| 1 forced \(--force-contested\) \|/);
      assert.equal(w.sandbox.controlsOf(CONTESTED).filter((c) => c.type === "SELL_ONLY").length, 1);
      const next = await w.run("reconcile", "--state", "bulk");
      const n = summaryOf(next);
      assert.equal(n.changes?.resolved_findings, 0, JSON.stringify(n.changes));
      assert.equal(next.code, 0, next.stderr.slice(-3000));
    });
  });
}
