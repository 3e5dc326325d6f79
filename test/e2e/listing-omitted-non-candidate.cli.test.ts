/**
 * Issue 50 §3 and §8: a bulk listing that wrongly leaves out an identity that is no candidate (its
 * source row unflagged) while the platform's legacy field restricts it. The run does not keep
 * such an identity, and it reads by id only the candidates a listing left out; what tells the
 * omission from an identity listed with both fields false is the run's record of the identities
 * it listed bare (`listed_bare`, 0019). The next bulk run, which lists the identity, concludes no
 * `platform_field_set`: the earlier run never read it. Through the CLI against the sandbox over
 * real HTTP; the proxy drops the identity from the first run's listing pages.
 *
 * The other way is tested too: an identity the run before kept with the field true, left out of
 * the next listing, is read by id before any conclusion, so no `platform_field_cleared`.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { backends } from "../helpers/db.ts";
import { type ReadWorld, type Row, readWorld, summaryOf, worldIds } from "../helpers/read-world.ts";

const IDS = worldIds(4, 5029);
/** Two flagged rows, two clean ones. */
const ROWS: Row[] = IDS.map((id, i) => [id, i < 2, false]);
/** Clean in the source, restricted by the platform's legacy field from the start. */
const MARKED = IDS[3] ?? "";
/** Clean in the source and on the platform at the first run. */
const LISTED_BARE = IDS[2] ?? "";
const LISTING = "/v2/identity/identities?";

/** Drops `id` from every identity listing page the sandbox answers. */
function omit(w: ReadWorld, id: string): void {
  w.proxy.rewrite = (r, body) => {
    if (!r.url.startsWith(LISTING)) return body;
    const page = JSON.parse(body) as { items?: { id: string }[] };
    if (!Array.isArray(page.items)) return body;
    return JSON.stringify({ ...page, items: page.items.filter((i) => i.id !== id) });
  };
}

for (const backend of backends) {
  describe(`a bulk listing that leaves out an unflagged identity the platform restricts on ${backend.name}`, {
    timeout: 300_000,
  }, () => {
    let w: ReadWorld;
    before(async () => {
      w = await readWorld(backend, ROWS);
      w.sandbox.setLegacyFields(MARKED, { user_disabled: true });
    });
    after(async () => {
      await w.close();
    });

    it("is read by id when the next listing leaves it out after a run that kept it: no platform_field_cleared", async () => {
      const world = await readWorld(backend, ROWS);
      try {
        world.sandbox.setLegacyFields(MARKED, { user_disabled: true });
        const first = summaryOf(await world.run("reconcile", "--state", "bulk"));
        assert.equal(first.findings.platform_will_restrict, 1, JSON.stringify(first.findings));
        omit(world, MARKED);
        const r = await world.run("reconcile", "--state", "bulk", "--exit-on", "changes");
        const s = summaryOf(r);
        const outside = JSON.stringify(s.changes?.outside);
        assert.equal(s.changes?.outside.platform_field_cleared, 0, outside);
        assert.equal(s.changes?.outside_total, 0, outside);
        assert.equal(r.code, 0, r.stderr.slice(-2000));
      } finally {
        await world.close();
      }
    });

    it("is no control_added on the next bulk run for a control the earlier listing left out with its identity", async () => {
      const world = await readWorld(backend, ROWS);
      try {
        const [held, later] = [IDS[2] ?? "", IDS[3] ?? ""];
        world.sandbox.addControl(held, { type: "DORMANT", is_overridable: true });
        world.sandbox.addControl(held, { type: "SELL_ONLY", is_overridable: true });
        omit(world, held);
        const first = summaryOf(await world.run("reconcile", "--state", "bulk"));
        assert.equal(first.findings.unknown_to_source ?? 0, 0, JSON.stringify(first.findings));
        world.proxy.rewrite = null;
        // A real change beside it: a control added to an identity the first run listed bare.
        world.sandbox.addControl(later, { type: "SELL_ONLY", is_overridable: true });
        const s = summaryOf(await world.run("reconcile", "--state", "bulk"));
        const outside = JSON.stringify(s.changes?.outside);
        assert.equal(s.changes?.outside.control_added, 1, outside);
        assert.equal(s.changes?.outside_total, 1, outside);
      } finally {
        await world.close();
      }
    });

    it("is no platform_field_set on the next bulk run that lists it", async () => {
      omit(w, MARKED);
      const first = summaryOf(await w.run("reconcile", "--state", "bulk"));
      assert.equal(first.findings.platform_will_restrict ?? 0, 0, "the first run did not see it");
      w.proxy.rewrite = null;
      // A real change beside it: a clean identity the first run listed bare, restricted since.
      w.sandbox.setLegacyFields(LISTED_BARE, { user_disabled: true });
      const r = await w.run("reconcile", "--state", "bulk", "--exit-on", "changes");
      const s = summaryOf(r);
      assert.equal(s.findings.platform_will_restrict, 2, JSON.stringify(s.findings));
      // The one change the platform made between the two runs, not the identity never read.
      const outside = JSON.stringify(s.changes?.outside);
      assert.equal(s.changes?.outside.platform_field_set, 1, outside);
      assert.equal(s.changes?.outside_total, 1, outside);
    });
  });
}
