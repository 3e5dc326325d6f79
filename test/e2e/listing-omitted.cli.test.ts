/**
 * Issue 50 §3: absence is confirmed. A bulk listing that leaves out 2 flagged identities (the proxy
 * drops them from its pages) does not make them `identity_not_found`: each is read by id, found,
 * classified from that read and given its control; summary.json `platform_state.listing.omitted`
 * is 2 and the summary names it. Through the CLI against the sandbox over real HTTP.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { backends } from "../helpers/db.ts";
import { type ReadWorld, type Row, readWorld, summaryOf, worldIds } from "../helpers/read-world.ts";

const IDS = worldIds(10, 5003);
const ROWS: Row[] = IDS.map((id) => [id, true, false]);
const OMITTED = new Set(IDS.slice(3, 5));
const LISTING = "/v2/identity/identities?";

const omittedOf = (s: { platform_state?: { listing: object | null } | null }) =>
  (s.platform_state?.listing as { omitted?: number } | null | undefined)?.omitted;

/** Drops the omitted identities from every listing page the sandbox answers. */
function omitFromListing(w: ReadWorld): void {
  w.proxy.rewrite = (r, body) => {
    if (!r.url.startsWith(LISTING)) return body;
    const page = JSON.parse(body) as { items?: { id: string }[] };
    if (!Array.isArray(page.items)) return body;
    return JSON.stringify({ ...page, items: page.items.filter((i) => !OMITTED.has(i.id)) });
  };
}

for (const backend of backends) {
  describe(`a bulk listing that omits 2 flagged identities on ${backend.name}`, {
    timeout: 300_000,
  }, () => {
    let w: ReadWorld;
    before(async () => {
      w = await readWorld(backend, ROWS);
      omitFromListing(w);
    });
    after(async () => {
      await w.close();
    });

    it("plan reads both by id, finds them missing their control, and counts them as omitted", async () => {
      const r = await w.run("plan", "--state", "bulk");
      const s = summaryOf(r);
      assert.equal(s.findings.identity_not_found, 0, r.stderr.slice(-2000));
      assert.equal(s.findings.missing_client_control, 10);
      assert.equal(omittedOf(s), 2);
      assert.match(r.md, /The listing omitted 2 candidate identities/);
      assert.match(r.html, /The listing omitted 2 candidate identities/);
      assert.match(r.stderr, /listing omitted 2 candidate identities/);
      assert.equal(r.code, 2);
      assert.deepEqual(s.coverage?.not_looked_for, []);
      assert.equal(s.coverage?.candidates_read, 10);
      assert.deepEqual(s.coverage?.observed_by, {
        complete_listing: 8,
        filtered_listing: 0,
        read_by_id: 2,
        not_read: 0,
        read_failed: 0,
      });
      assert.match(r.md, /Coverage: read 10 of 10 candidates; not looked for: none\./);
    });

    it("apply --state bulk gives both their control and exits 0, never identity_not_found", async () => {
      const r = await w.run("apply", "--state", "bulk");
      assert.equal(r.code, 0, r.stderr.slice(-3000));
      const s = summaryOf(r);
      assert.equal(s.findings.identity_not_found, 0);
      assert.equal(omittedOf(s), 2);
      for (const id of OMITTED) {
        assert.equal(w.sandbox.controlsOf(id).filter((c) => c.type === "SELL_ONLY").length, 1, id);
      }
    });

    it("a reconcile afterwards still reads the omitted ones by id and finds them in sync", async () => {
      const r = await w.run("reconcile", "--state", "bulk");
      assert.equal(r.code, 0, r.stderr.slice(-3000));
      const s = summaryOf(r);
      assert.equal(s.findings.in_sync, 10);
      assert.equal(omittedOf(s), 2);
    });
  });
}
