/**
 * Issue 50 §2: a run concludes only from what it read. A read outage (the controls path, the
 * identities-by-id path or the token endpoint refusing) never exits 0: a run that could not read
 * some candidate it needed exits 3 and its report lists them; a run that could read none exits 1
 * naming the cause. Through the CLI, the sandbox behind a proxy over real HTTP, on every backend.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { parseCsv } from "../helpers/corpus.ts";
import { backends } from "../helpers/db.ts";
import { type ReadWorld, type Row, readWorld, summaryOf, worldIds } from "../helpers/read-world.ts";

const IDS = worldIds(12, 5001);
const ROWS: Row[] = IDS.map((id, i) => [id, i % 3 !== 2, i % 3 === 2]);
/** The candidates whose read by id the proxy refuses in the partial outage. */
const UNREADABLE = new Set(IDS.slice(0, 4));
const CONTROLS = "/v2/identity/controls";
const BY_ID = "/v2/identity/identities/";
const TOKEN = "/oauth2/token";
/** Reads give up fast: an outage ends in failed reads, not in --max-refused-s. */
const FAST = ["--max-attempts", "2", "--retry-base-ms", "1", "--retry-cap-ms", "5"];

/** The token endpoint's refusal, as problem+json with `status`. */
const tokenRefusal = (status: number) => ({
  status,
  body: JSON.stringify({ type: "about:blank", title: "Refused", status, detail: "test outage" }),
});

const readFailedRows = (out: string) =>
  parseCsv(readFileSync(join(out, "diff.csv"), "utf8"))
    .filter((r) => r.finding === "read_failed")
    .map((r) => r.identity_id ?? "")
    .sort();

for (const backend of backends) {
  describe(`read failures on ${backend.name}`, { timeout: 600_000 }, () => {
    let w: ReadWorld;
    before(async () => {
      w = await readWorld(backend, ROWS);
    });
    after(async () => {
      await w.close();
    });

    for (const cmd of ["plan", "apply", "reconcile"]) {
      it(`${cmd} --state per-identity with the controls path answering 503 reads nothing and fails with exit 1, naming the path`, async () => {
        w.proxy.failWhen = (r) => (r.url.startsWith(CONTROLS) ? "fail" : "forward");
        const r = await w.run(cmd, "--state", "per-identity", ...FAST);
        w.proxy.failWhen = () => "forward";
        assert.equal(r.code, 1, r.stderr.slice(-3000));
        assert.match(
          r.stderr,
          /none of the 12 candidates could be read \(.*\/v2\/identity\/controls/,
        );
        assert.equal(summaryOf(r).status, "failed");
        assert.equal(w.sandbox.stats().writes.creates, 0, "nothing was sent");
      });
    }

    it("plan --state per-identity whose reads of 4 candidates' controls answer 503 records, per identity as it read them, exactly the other 8 as read by id and the 4 as read failed, and exits 3", async () => {
      w.proxy.failWhen = (r) =>
        r.url.startsWith(CONTROLS) && [...UNREADABLE].some((id) => r.url.includes(id))
          ? "fail"
          : "forward";
      const r = await w.run("plan", "--state", "per-identity", ...FAST);
      w.proxy.failWhen = () => "forward";
      assert.equal(r.code, 3, r.stderr.slice(-3000));
      const s = summaryOf(r);
      assert.deepEqual(s.coverage?.observed_by, {
        complete_listing: 0,
        filtered_listing: 0,
        read_by_id: 8,
        not_read: 0,
        read_failed: 4,
      });
      assert.deepEqual(readFailedRows(r.out), [...UNREADABLE].sort());
      const h = await w.target.open({ migrate: false });
      try {
        const rows = await sql<{ identity_id: string; status: string; observed_via: string }>`
          select identity_id, status, observed_via from controls_migration.snapshot_identities
          where run_id = ${s.run_id} order by identity_id`.execute(h.db);
        const via = (v: string | null) =>
          rows.rows.filter((x) => x.observed_via === v).map((x) => x.identity_id);
        assert.deepEqual(via("by_id"), IDS.filter((id) => !UNREADABLE.has(id)).sort());
        assert.deepEqual(via(null), [...UNREADABLE].sort());
        assert.ok(
          rows.rows.filter((x) => x.observed_via === null).every((x) => x.status === "error"),
        );
      } finally {
        await h.close();
      }
    });

    for (const cmd of ["plan", "apply", "reconcile"]) {
      it(`${cmd} --state filtered with 4 reads by id answering 503 exits 3, its report lists those 4 as read_failed and its coverage says 8 of 12 read`, async () => {
        w.proxy.failWhen = (r) =>
          r.url.startsWith(BY_ID) && UNREADABLE.has(r.url.slice(BY_ID.length).split("?")[0] ?? "")
            ? "fail"
            : "forward";
        const r = await w.run(cmd, "--state", "filtered", ...FAST);
        w.proxy.failWhen = () => "forward";
        assert.equal(r.code, 3, r.stderr.slice(-3000));
        const s = summaryOf(r);
        assert.equal(s.findings.read_failed, 4);
        assert.deepEqual(readFailedRows(r.out), [...UNREADABLE].sort());
        assert.match(r.md, /read_failed/);
        const { observed_by: by, ...coverage } = s.coverage ?? {};
        assert.equal(by?.read_failed, 4);
        assert.equal(by?.not_read, 0);
        assert.equal((by?.filtered_listing ?? 0) + (by?.read_by_id ?? 0), 8);
        assert.deepEqual(coverage, {
          candidates: 12,
          candidates_read: 8,
          candidates_unread: 4,
          read_failed: 4,
          not_looked_for: ["platform_will_restrict", "unknown_to_source"],
        });
        const line =
          "Coverage: read 8 of 12 candidates (4 read failed); not looked for: platform_will_restrict, unknown_to_source.";
        assert.ok(r.md.includes(line), r.md);
        assert.ok(r.html.includes(line));
        assert.ok(r.stderr.includes(line));
        assert.match(r.md, /\| `platform_will_restrict` \| not looked for \|/);
      });
    }

    for (const state of ["bulk", "filtered", "per-identity"]) {
      for (const cmd of ["plan", "apply", "reconcile"]) {
        for (const status of [503, 500]) {
          it(`${cmd} --state ${state} with the token endpoint answering ${status} exits 1 naming the token endpoint`, async () => {
            const creates = w.sandbox.stats().writes.creates;
            w.proxy.answerWhen = (r) => (r.url.startsWith(TOKEN) ? tokenRefusal(status) : null);
            const r = await w.run(cmd, "--state", state, ...FAST);
            w.proxy.answerWhen = () => null;
            assert.equal(r.code, 1, r.stderr.slice(-3000));
            assert.match(r.stderr, new RegExp(`POST /oauth2/token: ${status}`));
            assert.equal(w.sandbox.stats().writes.creates, creates, "nothing was sent");
          });
        }
      }
    }
  });
}
