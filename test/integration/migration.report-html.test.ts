import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { findingChanges } from "../../src/db/journal/finding-queries.ts";
import { insertRun } from "../../src/db/journal/run-queries.ts";
import { saveRequestSeries } from "../../src/db/report-queries/request-series-queries.ts";
import { TOOL_TABLES } from "../../src/db/schema.ts";
import { writeRunReport } from "../../src/migration/run/report.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";

const summary = (runId: string, over: Partial<RunSummary> = {}): Omit<RunSummary, "reports"> => ({
  run_id: runId,
  mode: "plan",
  status: "completed",
  started_at: "2026-01-01T00:00:00.000Z",
  finished_at: "2026-01-01T00:00:30.000Z",
  duration_s: 30,
  strategy: "bulk",
  source: { rows_read: 0, candidates: 0, anomalies: 0 },
  findings: {},
  outcomes: {},
  requests: {},
  throughput: { identities_per_s: 0, actions_per_s: 0 },
  changes: null,
  exit_code: 2,
  ...over,
});

/** The JSON block of the diff table, as the page's script reads it. */
function tableData(html: string): { columns: { key: string }[]; rows: unknown[][] } {
  const m = /<script type="application\/json" id="diff-data">([\s\S]*?)<\/script>/.exec(html);
  assert.ok(m?.[1], "report.html has its #diff-data block");
  return JSON.parse(m[1]);
}

const run = (db: TestDatabase["db"], id: string, mode: "plan" | "reconcile" = "plan") =>
  insertRun(db, {
    id,
    mode,
    parentRunId: null,
    options: { api_url: "https://user:pw@api.example.com/base?token=abc#x" },
    toolVersion: "t",
  });

for (const b of backends) {
  describe(`report.html written with a run's report on ${b.name}`, () => {
    let h: TestDatabase;
    const dirs: string[] = [];
    const dir = () => {
      const d = mkdtempSync(join(tmpdir(), "cm-html-"));
      dirs.push(d);
      return d;
    };
    before(async () => {
      h = await b.open({ migrate: true });
    });
    after(async () => {
      await h.close();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    it("holds the first 10,000 diff rows, streamed, and says how many more diff.csv has", async () => {
      await run(h.db, "big");
      await sql`
        insert into ${sql.table(TOOL_TABLES.findings)} (run_id, identity_id, finding, detail)
        select 'big', 'id-' || lpad(g::text, 6, '0'), 'identity_not_found', 'not listed'
        from generate_series(1, 10050) g`.execute(h.db);
      const out = dir();
      const full = await writeRunReport(h.db, summary("big"), out, false);
      assert.equal(full.reports.rows, 10_050);
      const html = readFileSync(join(out, "report.html"), "utf8");
      const data = tableData(html);
      assert.equal(data.rows.length, 10_000);
      assert.equal(data.rows[0]?.[0], "id-000001");
      assert.equal(data.rows[9999]?.[0], "id-010000");
      assert.match(html, /data-shown="10000" data-more="50"/);
      assert.match(html, /The table holds the first 10,000 rows; 50 more are in diff\.csv/);
      assert.ok(
        readdirSync(out).every((f) => !f.endsWith(".tmp")),
        "no temporary file is left behind",
      );
    });

    it("shows the target API without credentials, query or fragment", async () => {
      const out = dir();
      await writeRunReport(h.db, summary("big"), out, false);
      const html = readFileSync(join(out, "report.html"), "utf8");
      assert.match(html, /<dd id="api-url" class="mono">https:\/\/api\.example\.com\/base<\/dd>/);
      assert.ok(!html.includes("pw@") && !html.includes("token=abc"));
    });

    it("draws the timeline from the request series stored with the run", async () => {
      await run(h.db, "timed");
      const t0 = Date.parse("2026-01-01T00:00:00.000Z") / 1000;
      await saveRequestSeries(h.db, "timed", [
        { at: t0, requests: 40, rateLimited: 0, retries: 0, ambiguous: 0 },
        { at: t0 + 1, requests: 38, rateLimited: 1, retries: 2, ambiguous: 0 },
      ]);
      // A resumed process adds its own counts to a second already stored.
      await saveRequestSeries(h.db, "timed", [
        { at: t0 + 1, requests: 2, rateLimited: 0, retries: 0, ambiguous: 1 },
      ]);
      const out = dir();
      await writeRunReport(h.db, summary("timed"), out, false);
      const html = readFileSync(join(out, "report.html"), "utf8");
      assert.match(
        html,
        /data-requests="80" data-rate-limited="1" data-retries="2" data-ambiguous="1"/,
      );
      assert.equal(html.match(/class="mark-429"/g)?.length, 1);
      assert.equal(html.match(/class="mark-ambiguous"/g)?.length, 1);
    });

    it("lists a reconcile's new and resolved findings, as many as summary.json counts", async () => {
      await run(h.db, "r1", "reconcile");
      await run(h.db, "r2", "reconcile");
      // Both read with a complete listing: every identity observed by both, so all are compared.
      await h.db
        .updateTable(TOOL_TABLES.runs)
        .set({ strategy: "bulk" })
        .where("id", "in", ["r1", "r2"])
        .execute();
      const rows = (runId: string, ids: string[]) =>
        ids.map((identity_id) => ({
          run_id: runId,
          identity_id,
          finding: "missing_service_control",
          expected_set_by: "SERVICE",
        }));
      await h.db
        .insertInto(TOOL_TABLES.findings)
        .values([...rows("r1", ["a", "b", "c"]), ...rows("r2", ["b", "c", "d", "e"])])
        .execute();
      const c = await findingChanges(h.db, "r2", "r1");
      const changes = {
        since_run_id: "r1",
        outside: {},
        outside_total: 0,
        undone_total: 0,
        new_findings: c.newFindings,
        resolved_findings: c.resolvedFindings,
        new_client_work: 0,
      };
      const out = dir();
      await writeRunReport(h.db, summary("r2", { mode: "reconcile", changes }), out, false);
      const html = readFileSync(join(out, "report.html"), "utf8");
      assert.match(
        html,
        /Compared with r1 after its actions: 0 outside changes \(0 undoing the tool's writes\), 2 new findings, 1 resolved\./,
      );
      const listed = (id: string) =>
        [
          ...(new RegExp(`<table id="${id}">([\\s\\S]*?)</table>`).exec(html)?.[1] ?? "").matchAll(
            /<tr><td>([^<]*)<\/td>/g,
          ),
        ].map((m) => m[1]);
      assert.deepEqual(listed("new-findings"), ["d", "e"]);
      assert.deepEqual(listed("resolved-findings"), ["a"]);
    });
  });
}
