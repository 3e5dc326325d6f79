/**
 * Issue 50 §1 and §4: the delta compares only what both runs saw. A per-identity reconcile after a
 * bulk reconcile, with nothing changed between, reports no new, no resolved finding and no outside
 * change, though it did not read the unflagged identities whose findings the bulk run reported;
 * its coverage names what it did not look for, and its summary says so instead of a 0.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { parseCsv } from "../helpers/corpus.ts";
import { backends } from "../helpers/db.ts";
import { type ReadWorld, type Row, readWorld, summaryOf, worldIds } from "../helpers/read-world.ts";

const IDS = worldIds(9, 5007);
/** 6 flagged rows, 3 unflagged. */
const ROWS: Row[] = IDS.map((id, i) => [id, i < 6, false]);
const [EXTRA_CONTROL, LEGACY_ONLY] = [IDS[6] ?? "", IDS[7] ?? ""];

for (const backend of backends) {
  describe(`the nightly delta under every strategy on ${backend.name}`, {
    timeout: 300_000,
  }, () => {
    let w: ReadWorld;
    before(async () => {
      w = await readWorld(backend, ROWS);
      // Findings only a complete listing sees: a client's control on an unflagged identity, and
      // an unflagged identity whose platform legacy field restricts it.
      w.sandbox.addControl(EXTRA_CONTROL, { type: "SELL_ONLY", set_by: "SET_BY_CLIENT" });
      w.sandbox.setLegacyFields(LEGACY_ONLY, { user_disabled: true });
    });
    after(async () => {
      await w.close();
    });

    it("a per-identity reconcile after a bulk reconcile with no change reports 0 new, 0 resolved, 0 outside changes, and names what it did not look for", async () => {
      const bulk = await w.run("reconcile", "--state", "bulk");
      const b = summaryOf(bulk);
      assert.ok(
        (b.findings.unexpected_client_control ?? 0) + (b.findings.platform_will_restrict ?? 0) >= 2,
        JSON.stringify(b.findings),
      );
      assert.deepEqual(b.coverage?.not_looked_for, []);
      const again = await w.run("reconcile", "--state", "per-identity", "--exit-on", "changes");
      const s = summaryOf(again);
      assert.equal(again.code, 0, again.stderr.slice(-3000));
      assert.equal(s.changes?.new_findings, 0, JSON.stringify(s.changes));
      assert.equal(s.changes?.resolved_findings, 0, JSON.stringify(s.changes));
      assert.equal(s.changes?.outside_total, 0, JSON.stringify(s.changes));
      assert.equal(s.changes?.compared_identities, 6);
      assert.ok((s.coverage?.not_looked_for.length ?? 0) > 0);
      assert.ok(s.coverage?.not_looked_for.includes("platform_will_restrict"));
      assert.equal(s.coverage?.candidates_read, 6);
      assert.equal(s.coverage?.observed_by?.read_by_id, 6);
      assert.match(again.md, /\| `platform_will_restrict` \| not looked for \| not looked for \|/);
      assert.match(
        again.stderr,
        /Coverage: read 6 of 6 candidates; not looked for: platform_will_restrict/,
      );
    });

    it("a filtered reconcile then a bulk one, with no change, report 0 new and 0 resolved", async () => {
      const filtered = await w.run("reconcile", "--state", "filtered", "--exit-on", "changes");
      assert.equal(filtered.code, 0, filtered.stderr.slice(-3000));
      const f = summaryOf(filtered);
      assert.equal(f.changes?.new_findings, 0, JSON.stringify(f.changes));
      assert.equal(f.changes?.resolved_findings, 0, JSON.stringify(f.changes));
      const bulk = await w.run("reconcile", "--state", "bulk", "--exit-on", "changes");
      const b = summaryOf(bulk);
      assert.equal(b.changes?.new_findings, 0, JSON.stringify(b.changes));
      assert.equal(b.changes?.resolved_findings, 0, JSON.stringify(b.changes));
      assert.equal(bulk.code, 0, bulk.stderr.slice(-3000));
    });

    it("a per-identity night after a bulk night keeps the findings of identities it did not read as last seen by the bulk run, never resolved; the next bulk night reports what changed on them meanwhile and nothing else", async () => {
      const bulk = summaryOf(await w.run("reconcile", "--state", "bulk"));
      const unread = [EXTRA_CONTROL, LEGACY_ONLY];
      const partial = await w.run("reconcile", "--state", "per-identity", "--exit-on", "changes");
      assert.equal(partial.code, 0, partial.stderr.slice(-3000));
      const p = summaryOf(partial);
      assert.equal(p.changes?.resolved_findings, 0, JSON.stringify(p.changes));
      assert.equal(p.changes?.new_findings, 0, JSON.stringify(p.changes));
      const kept = p.changes?.last_seen;
      assert.ok((kept?.findings ?? 0) >= 2, JSON.stringify(kept));
      assert.deepEqual(Object.keys(kept?.by_run ?? {}), [bulk.run_id]);
      const rows = parseCsv(readFileSync(join(partial.out, "diff.csv"), "utf8"));
      for (const id of unread) {
        const row = rows.find((r) => r.identity_id === id);
        assert.equal(row?.outcome, `last seen by run ${bulk.run_id}`, JSON.stringify(rows));
      }
      const line = `last seen by run ${bulk.run_id}`;
      for (const text of [partial.md, partial.html, partial.stderr]) assert.ok(text.includes(line));
      // A real change on an identity the per-identity night did not read: the client's control
      // on EXTRA_CONTROL goes. The next bulk night compares it with what the bulk night saw.
      for (const c of w.sandbox.controlsOf(EXTRA_CONTROL)) w.sandbox.deleteControl(c.id);
      const again = await w.run("reconcile", "--state", "bulk");
      const a = summaryOf(again);
      assert.equal(a.changes?.since_run_id, p.run_id);
      assert.equal(a.changes?.new_findings, 0, JSON.stringify(a.changes));
      assert.equal(a.changes?.resolved_findings, 1, JSON.stringify(a.changes));
      assert.deepEqual(a.changes?.last_seen, { findings: 0, by_run: {} });
      // Nothing changed since: a third bulk night reports neither new nor resolved.
      const third = summaryOf(await w.run("reconcile", "--state", "bulk", "--exit-on", "changes"));
      assert.equal(third.changes?.new_findings, 0, JSON.stringify(third.changes));
      assert.equal(third.changes?.resolved_findings, 0, JSON.stringify(third.changes));
    });

    it("reports the platform's legacy fields set or cleared on the platform as platform_field_set and platform_field_cleared, in summary.json, changes.csv and report.html", async () => {
      w.sandbox.setLegacyFields(IDS[0] ?? "", { admin_disabled: true });
      w.sandbox.setLegacyFields(IDS[1] ?? "", { user_disabled: false });
      const r = await w.run("reconcile", "--state", "bulk");
      const s = summaryOf(r);
      assert.equal(s.changes?.outside.platform_field_set, 1, JSON.stringify(s.changes));
      assert.equal(s.changes?.outside.platform_field_cleared, 1, JSON.stringify(s.changes));
      const csv = parseCsv(readFileSync(join(r.out, "changes.csv"), "utf8"));
      const kinds = csv.map((c) => `${c.identity_id}|${c.change}`).sort();
      assert.ok(kinds.includes(`${IDS[0]}|platform_field_set`), kinds.join("\n"));
      assert.ok(kinds.includes(`${IDS[1]}|platform_field_cleared`), kinds.join("\n"));
      assert.match(r.html, /<td>platform_field_set<\/td><td class="num">1<\/td>/);
    });

    it("a legacy field cleared on the platform for an identity a bulk run does not keep (no flag in the source, no control) is reported as platform_field_cleared, in summary.json and changes.csv, and set again as platform_field_set", async () => {
      const before = summaryOf(await w.run("reconcile", "--state", "bulk"));
      assert.ok(
        (before.findings.platform_will_restrict ?? 0) >= 1,
        JSON.stringify(before.findings),
      );
      w.sandbox.setLegacyFields(LEGACY_ONLY, { user_disabled: false });
      const r = await w.run("reconcile", "--state", "bulk");
      const s = summaryOf(r);
      assert.equal(s.changes?.outside.platform_field_cleared, 1, JSON.stringify(s.changes));
      assert.equal(s.changes?.outside.platform_field_set, 0, JSON.stringify(s.changes));
      assert.equal(s.findings.platform_will_restrict ?? 0, 0, JSON.stringify(s.findings));
      const csv = parseCsv(readFileSync(join(r.out, "changes.csv"), "utf8"));
      assert.deepEqual(
        csv.filter((c) => c.change === "platform_field_cleared").map((c) => c.identity_id),
        [LEGACY_ONLY],
      );
      // A bulk night after it does not keep the identity (both fields false, no control); the
      // field set again on the platform is seen by the next bulk night.
      await w.run("reconcile", "--state", "bulk");
      w.sandbox.setLegacyFields(LEGACY_ONLY, { user_disabled: true });
      const set = summaryOf(await w.run("reconcile", "--state", "bulk"));
      assert.equal(set.changes?.outside.platform_field_set, 1, JSON.stringify(set.changes));
      assert.equal(set.changes?.outside.platform_field_cleared, 0, JSON.stringify(set.changes));
    });
  });
}
