/**
 * Issue 50 §3 and §8, the known gap: a bulk listing that wrongly leaves out an identity that is no
 * candidate (its source row unflagged) while the platform's legacy field restricts it. The run
 * cannot tell the omission from an identity listed with both fields false: it keeps no record of
 * what its listing served beyond the identities it keeps, and it reads by id only the candidates
 * the listing left out (and, from the run before, the identities marked then and unkept now). The
 * next bulk run, which lists the identity, concludes `platform_field_set` though nothing changed.
 * Through the CLI against the sandbox over real HTTP; the proxy drops the identity from the first
 * run's listing pages.
 *
 * The other way holds and is tested: an identity the run before kept with the field true, left out
 * of the next listing, is read by id before any conclusion, so no `platform_field_cleared`.
 *
 * The first test is marked `todo` until the tool records what a complete listing served (or reads by id every
 * source row the listing left out): see this test's `todo` text.
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

    it("is no platform_field_set on the next bulk run that lists it", {
      todo: "a bulk run keeps no record of the identities its listing served, so the next run takes an identity it did not keep for one listed with both fields false; a fix records the listed ids (a hash set per bulk run, a migration) or reads by id the source rows a listing left out",
    }, async () => {
      omit(w, MARKED);
      const first = summaryOf(await w.run("reconcile", "--state", "bulk"));
      assert.equal(first.findings.platform_will_restrict ?? 0, 0, "the first run did not see it");
      w.proxy.rewrite = null;
      const r = await w.run("reconcile", "--state", "bulk", "--exit-on", "changes");
      const s = summaryOf(r);
      assert.equal(s.findings.platform_will_restrict, 1, JSON.stringify(s.findings));
      // Nothing changed on the platform between the two runs.
      assert.equal(s.changes?.outside.platform_field_set, 0, JSON.stringify(s.changes?.outside));
    });
  });
}
