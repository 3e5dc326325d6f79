/**
 * Issue 55: `reconcile --since-last` reads only what changed since the last complete read, and
 * proves it against complete reads. Two identical worlds go through the same history (a complete
 * reconcile, then outside changes of every kind); one is reconciled with --since-last, the other
 * completely: findings, new, resolved and changes.outside agree, at a fraction of the requests.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { SinceLastSummary } from "../../src/migration/read/since-last-choice.ts";
import { parseCsv } from "../helpers/corpus.ts";
import { backends } from "../helpers/db.ts";
import type { RunOutcome } from "../helpers/read-world.ts";
import { summaryOf } from "../helpers/read-world.ts";
import {
  changeEverything,
  type SinceLastWorld,
  sinceLastWorld,
} from "../helpers/since-last-world.ts";

/** 20 listing pages of 1000; one identity in 100 flagged. */
const SHAPE = { n: 20_000, flagEvery: 100 } as const;

/** diff.csv's findings as identity|finding, in_sync left out. */
const findingsOf = (r: RunOutcome) =>
  parseCsv(readFileSync(join(r.out, "diff.csv"), "utf8"))
    .filter((row) => row.finding !== "in_sync")
    .map((row) => `${row.identity_id}|${row.finding}`)
    .sort();

/** summary.json's `platform_state.since_last`. */
const sinceLastOf = (s: ReturnType<typeof summaryOf>) =>
  s.platform_state?.since_last as SinceLastSummary | undefined;

/** Runs a command and returns its outcome with the requests the sandbox saw meanwhile. */
async function counted(w: SinceLastWorld, ...args: string[]) {
  const before = w.requests();
  const r = await w.run(...args);
  const now = w.requests();
  return { r, listing: now.listing - before.listing, byId: now.byId - before.byId };
}

for (const backend of backends) {
  describe(`reconcile --since-last on ${backend.name}`, { timeout: 600_000 }, () => {
    const worlds: SinceLastWorld[] = [];
    after(async () => {
      for (const w of worlds) await w.close();
    });

    it("without a previous complete run, --since-last reads everything and says so; the plan and reconcile after it read incrementally", async () => {
      const w = await sinceLastWorld(backend, { ...SHAPE, n: 3000, policy: "all" });
      worlds.push(w);
      const first = await counted(w, "reconcile", "--since-last");
      const s = summaryOf(first.r);
      assert.equal(first.r.code, 0, first.r.stderr.slice(-3000));
      assert.equal(s.coverage?.mode, "complete");
      assert.match(
        s.coverage?.reason ?? "",
        /no earlier complete read of platform .* reading everything/,
      );
      assert.match(first.r.stderr, /--since-last: no earlier complete read of platform/);
      assert.match(first.r.md, /no earlier complete read of platform/);
      // --since-last builds on complete listings: another --state is refused, naming both.
      const filtered = await w.run("plan", "--since-last", "--state", "filtered");
      assert.equal(filtered.code, 1, filtered.stderr.slice(-2000));
      assert.match(filtered.stderr, /--since-last cannot be combined with --state filtered/);
      assert.ok(first.listing >= 3, `listing pages: ${first.listing}`);
      // The next ones build on it: a plan as a reconcile.
      const plan = await w.run("plan", "--since-last");
      assert.equal(summaryOf(plan).coverage?.mode, "incremental", plan.stderr.slice(-3000));
      assert.equal(summaryOf(plan).coverage?.since_run_id, s.run_id);
      const next = summaryOf(await w.run("reconcile", "--since-last"));
      assert.equal(next.coverage?.mode, "incremental");
      assert.equal(next.coverage?.since_run_id, s.run_id);
    });

    it("after outside changes of every kind, --since-last finds the findings, new, resolved and outside changes a complete reconcile finds on the same world, with far fewer requests, and so does a second incremental night built on the first", async () => {
      const a = await sinceLastWorld(backend, { ...SHAPE, policy: "all" });
      worlds.push(a);
      const b = await sinceLastWorld(backend, { ...SHAPE, policy: "all" });
      worlds.push(b);
      // The first night creates the missing controls; the second finds nothing to do. Its start
      // is the bound of the next --since-last (no margin: the sandbox shares this machine's clock).
      for (const w of [a, b]) {
        for (let night = 0; night < 2; night += 1) {
          const c = await w.run("reconcile", "--state", "bulk");
          assert.equal(c.code, 0, c.stderr.slice(-3000));
        }
      }
      const changed = await changeEverything([a, b]);
      // A source row of an identity no run ever observed: the one read by id.
      const unseen = "0badc0de-5555-4555-8555-000000000055";
      for (const w of [a, b]) {
        await w.source(`insert into identities values ('${unseen}', true, false)`);
      }
      const sinceLast = ["--since-last", "--since-margin-s", "0"];
      const inc = await counted(a, "reconcile", ...sinceLast, "--exit-on", "any");
      const full = await counted(b, "reconcile", "--state", "bulk", "--exit-on", "any");
      const si = summaryOf(inc.r);
      const sf = summaryOf(full.r);
      assert.equal(si.coverage?.mode, "incremental", inc.r.stderr.slice(-3000));
      // Most candidates carried (the bound is whole seconds: the first night's last creates may
      // share the second night's first second, and are listed).
      assert.ok((si.coverage?.carried ?? 0) >= a.flagged.length / 2, JSON.stringify(si.coverage));
      assert.deepEqual(findingsOf(inc.r), findingsOf(full.r));
      assert.deepEqual(si.findings, sf.findings);
      assert.equal(si.changes?.new_findings, sf.changes?.new_findings);
      assert.equal(si.changes?.resolved_findings, sf.changes?.resolved_findings);
      assert.deepEqual(si.changes?.outside, sf.changes?.outside);
      assert.ok((sf.changes?.outside_total ?? 0) >= 8, JSON.stringify(sf.changes?.outside));
      assert.equal(inc.r.code, full.r.code);
      // 20 pages and more for the complete read; one for what changed, and one read by id: the
      // candidates whose flag was set were seen bare by the complete read and not listed as
      // changed since, so they are carried; only the identity never observed is read.
      assert.ok(full.listing >= 20, `complete listing pages: ${full.listing}`);
      assert.equal(inc.listing, 1, `incremental listing pages: ${inc.listing}`);
      const state = sinceLastOf(si);
      assert.equal(inc.byId, 1, `incremental reads by id: ${inc.byId} ${JSON.stringify(state)}`);
      assert.equal(state?.carried_bare, changed.flagSet?.length, JSON.stringify(state));
      assert.deepEqual(state?.read_by_id_because, {
        source_changed: 1,
        needs_platform_state: 0,
        written: 0,
      });
      assert.ok(si.findings.identity_not_found === 1, JSON.stringify(si.findings));
      assert.match(inc.r.stderr, /1 read again by id \(source row changed and never observed: 1;/);
      assert.ok(inc.listing + inc.byId < (full.listing + full.byId) / 2);
      assert.match(inc.r.stderr, /Coverage: .*incremental/);
      assert.match(inc.r.md, /incremental since/);
      // A second night on the first incremental one: it carries what that run carried or read.
      for (const w of [a, b]) {
        for (const c of w.sandbox.controlsOf(w.flagged[7] ?? "")) w.sandbox.deleteControl(c.id);
        w.sandbox.addControl(w.clean[7] ?? "", { type: "SELL_ONLY", set_by: "SET_BY_CLIENT" });
        await w.source(`update identities set user_disabled = true where id = '${w.clean[8]}'`);
      }
      const inc2 = await counted(a, "reconcile", ...sinceLast, "--exit-on", "any");
      const full2 = await counted(b, "reconcile", "--state", "bulk", "--exit-on", "any");
      const [si2, sf2] = [summaryOf(inc2.r), summaryOf(full2.r)];
      assert.equal(si2.coverage?.view_run_id, si.run_id, JSON.stringify(si2.coverage));
      assert.deepEqual(findingsOf(inc2.r), findingsOf(full2.r));
      assert.equal(si2.changes?.new_findings, sf2.changes?.new_findings);
      assert.equal(si2.changes?.resolved_findings, sf2.changes?.resolved_findings);
      assert.deepEqual(si2.changes?.outside, sf2.changes?.outside);
      assert.equal(inc2.listing, 1, `second incremental listing pages: ${inc2.listing}`);
      // clean[8]'s flag set: bare in the complete read, carried; the first night's creates are
      // read again (written to since), and so is the identity unknown to the platform.
      assert.equal(sinceLastOf(si2)?.carried_bare, 1, JSON.stringify(si2.platform_state));
      assert.equal(sinceLastOf(si2)?.read_by_id_because?.source_changed, 0);
    });

    it("under --updated-at-policy identity-fields, controls removed that an incremental run missed are found by the next complete run as stale_incremental, and the next --since-last reads everything, naming the platform and the miss", async () => {
      const w = await sinceLastWorld(backend, { ...SHAPE, n: 3000, policy: "identity-fields" });
      worlds.push(w);
      // Two complete nights: the first creates the controls, the second is the base.
      for (let night = 0; night < 2; night += 1) await w.run("reconcile", "--state", "bulk");
      const args = ["reconcile", "--since-last", "--since-margin-s", "0", "--full-every", "2"];
      const removed = [w.flagged[1] ?? "", w.flagged[2] ?? ""];
      for (const id of removed) {
        for (const c of w.sandbox.controlsOf(id)) w.sandbox.deleteControl(c.id);
      }
      const i1 = summaryOf(await w.run(...args));
      assert.equal(i1.coverage?.mode, "incremental");
      // The platform did not move updated_at: the incremental run carried the old controls.
      assert.equal(i1.findings.missing_client_control ?? 0, 0, JSON.stringify(i1.findings));
      const c2run = await w.run(...args);
      const c2 = summaryOf(c2run);
      assert.equal(c2.coverage?.mode, "complete");
      assert.match(c2.coverage?.reason ?? "", /--full-every/);
      assert.equal(c2.findings.stale_incremental, 2, JSON.stringify(c2.findings));
      const rows = parseCsv(readFileSync(join(c2run.out, "diff.csv"), "utf8"));
      const stale = rows.filter((r) => r.finding === "stale_incremental").map((r) => r.identity_id);
      assert.deepEqual(stale.sort(), [...removed].sort());
      assert.match(c2run.md, /stale_incremental/);
      assert.match(c2run.html, /stale_incremental/);
      assert.equal(c2run.code, 2, "stale_incremental is work for the client: exit 2");
      const next = await w.run(...args);
      const n = summaryOf(next);
      assert.equal(n.coverage?.mode, "complete");
      const why = new RegExp(
        `refusing to read incrementally: the complete run ${c2.run_id} found 2 stale_incremental identities on platform ${w.sandbox.apiUrl.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`,
      );
      assert.match(n.coverage?.reason ?? "", why);
      assert.match(next.stderr, why);
      for (const id of removed) assert.ok(n.coverage?.reason?.includes(id), n.coverage?.reason);
      // The complete run that refused found no miss (no incremental run since): reads resume.
      const resumed = summaryOf(await w.run(...args));
      assert.equal(resumed.coverage?.mode, "incremental", resumed.coverage?.reason);
    });

    it("under --updated-at-policy none, a candidate whose flag was set is carried as the complete read saw it, bare, without a read by id; a control the platform gave it meanwhile is found by the next complete run as stale_incremental", async () => {
      const w = await sinceLastWorld(backend, { ...SHAPE, n: 3000, policy: "none" });
      worlds.push(w);
      for (let night = 0; night < 2; night += 1) await w.run("reconcile", "--state", "bulk");
      const x = w.clean[3] ?? "";
      await w.source(`update identities set user_disabled = true where id = '${x}'`);
      // The platform gives it a control and does not move its updated_at (policy none).
      w.sandbox.addControl(x, { type: "SELL_ONLY", set_by: "SET_BY_SERVICE" });
      const args = ["plan", "--since-last", "--since-margin-s", "0", "--full-every", "2"];
      const i1 = await counted(w, ...args);
      const s1 = summaryOf(i1.r);
      assert.equal(s1.coverage?.mode, "incremental", i1.r.stderr.slice(-3000));
      assert.equal(i1.byId, 0, JSON.stringify(s1.platform_state));
      assert.equal(sinceLastOf(s1)?.carried_bare, 1);
      const row = (r: RunOutcome, id: string) =>
        parseCsv(readFileSync(join(r.out, "diff.csv"), "utf8")).filter((f) => f.identity_id === id);
      // Carried bare, it reads as a flag without its control.
      assert.deepEqual(
        row(i1.r, x).map((f) => f.finding),
        ["missing_client_control"],
      );
      const c2 = await w.run(...args);
      const s2 = summaryOf(c2);
      assert.equal(s2.coverage?.mode, "complete");
      assert.equal(s2.findings.stale_incremental, 1, JSON.stringify(s2.findings));
      const stale = row(c2, x).find((f) => f.finding === "stale_incremental");
      assert.ok(stale, JSON.stringify(row(c2, x)));
      assert.match(c2.stderr, new RegExp(`stale_incremental: 1 identity .*\\(${x}\\)`));
    });
  });
}
