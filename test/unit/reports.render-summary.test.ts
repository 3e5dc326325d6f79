import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderPageHead } from "../../src/reports/html/report-page.ts";
import { type RunSummary, renderSummaryTable } from "../../src/reports/summary.ts";
import { renderSummaryMarkdown } from "../../src/reports/summary-markdown.ts";

const base: RunSummary = {
  run_id: "20261122-101500-ab12",
  mode: "plan",
  status: "completed",
  started_at: "2026-11-22T10:15:00.000Z",
  finished_at: "2026-11-22T10:15:03.000Z",
  duration_s: 3,
  strategy: "bulk",
  source: { rows_read: 10_000, candidates: 1200, anomalies: 12 },
  findings: { in_sync: 150, missing_client_control: 1000, missing_service_control: 20 },
  outcomes: {},
  requests: {},
  throughput: { identities_per_s: 3333.3, actions_per_s: 0 },
  changes: null,
  exit_code: 2,
  reports: { dir: "/r", diff_csv: "/r/diff.csv", rows: 1020 },
};

const applied: RunSummary = {
  ...base,
  mode: "apply",
  exit_code: 0,
  findings_left: { in_sync: 150, missing_client_control: 0, missing_service_control: 20 },
  actions_by_finding: { missing_client_control: { adopted: 2, created: 998 } },
  outcomes: { "succeeded:created": 998, "succeeded:adopted": 2 },
  throughput: { identities_per_s: 3333.3, actions_per_s: 333.3 },
};

describe("run summaries", () => {
  it("name a ledger gap and a listing's omissions in summary.md, report.html and the terminal, not only on stderr", () => {
    const message =
      "The run's books do not balance at the journal stage: delete actions for prunable findings: expected 0, counted 6.";
    const s: RunSummary = {
      ...applied,
      status: "failed",
      exit_code: 4,
      platform_state: { strategy: "bulk", reason: "r", existence: "e", listing: { omitted: 2 } },
      ledger_error: { stage: "journal", what: "w", expected: 0, actual: 6, message },
    };
    for (const text of [
      renderSummaryMarkdown(s),
      renderSummaryTable(s),
      renderPageHead({ summary: s, apiUrl: null, series: [], changes: null, toolVersion: "t" }),
    ]) {
      assert.ok(text.includes("delete actions for prunable findings: expected 0, counted 6"), text);
      assert.match(text, /The listing omitted 2 candidate identities that a read by id found/);
    }
  });

  it("of a reconcile say what changed outside the tool since the previous run, on the terminal and in summary.md", () => {
    const nightly: RunSummary = {
      ...applied,
      mode: "reconcile",
      changes: {
        since_run_id: "20261121-021500-cd34",
        outside: { control_removed: 1, control_added: 1, flag_set: 0 },
        outside_total: 2,
        undone_total: 1,
        new_findings: 2,
        resolved_findings: 0,
        new_client_work: 0,
      },
    };
    assert.match(
      renderSummaryTable(nightly),
      /^ {2}since 20261121-021500-cd34: 2 outside changes \(1 undoing the tool's writes\), 2 new, 0 resolved$/m,
    );
    const md = renderSummaryMarkdown(nightly);
    assert.match(md, /Compared with 20261121-021500-cd34 after its actions: 2 outside changes/);
    assert.match(md, /\| control_removed \| 1 \|/);
    assert.doesNotMatch(md, /flag_set/, "kinds that did not happen are left out");
  });

  it("after apply show what is left and what was done, not the count found before", () => {
    const table = renderSummaryTable(applied);
    assert.match(table, /^ {2}missing_client_control +0 left {2}2 adopted, 998 created$/m);
    assert.match(table, /^ {2}missing_service_control +20 left$/m);
    assert.doesNotMatch(table, /\b1000\b/, "the count found before apply is not shown");
  });

  it("align the counts of every finding in one column", () => {
    const rows = renderSummaryTable(applied)
      .split("\n")
      .filter((l) => /^ {2}[a-z_]+ +\d/.test(l));
    const ends = rows.map((l) => /^ {2}[a-z_]+ +\d+/.exec(l)?.[0].length);
    assert.equal(new Set(ends).size, 1, rows.join("\n"));
  });

  it("of a plan show no actions/s figure, which could only read 0.0", () => {
    assert.doesNotMatch(renderSummaryMarkdown(base), /actions\/s/);
    assert.match(renderSummaryMarkdown(applied), /333\.3 actions\/s/);
  });

  it("of a resumed run show the source counts it carries", () => {
    assert.match(
      renderSummaryTable(applied),
      /source: 10000 rows read, 1200 candidates, 12 anomalies/,
    );
  });

  it("lists every pause, continue, rate change and hold with who and when", () => {
    const md = renderSummaryMarkdown({
      ...applied,
      control_events: [
        {
          at: "2026-11-22T10:15:01.000Z",
          who: "ana@ops1",
          pid: 42,
          event: "pause",
          rate: null,
          detail: null,
        },
        {
          at: "2026-11-22T10:15:02.000Z",
          who: "ana@ops1",
          pid: 43,
          event: "set_rate",
          rate: 5,
          detail: null,
        },
        {
          at: "2026-11-22T10:15:02.500Z",
          who: "cm@ops1",
          pid: 7,
          event: "throttle_on",
          rate: null,
          detail: "/run/t",
        },
      ],
    });
    assert.match(md, /## Pauses and rate changes/);
    assert.match(md, /2026-11-22T10:15:01.000Z \| ana@ops1 \(pid 42\) \| pause/);
    assert.match(md, /set-rate 5/);
    assert.match(md, /throttle_on: \/run\/t/);
    assert.doesNotMatch(renderSummaryMarkdown(applied), /Pauses and rate changes/);
  });

  it("a revert says which run it reverts and lists the re-created controls with their new ids", () => {
    const md = renderSummaryMarkdown({
      ...applied,
      mode: "revert",
      revert: {
        of_run_id: "20261122-090000-cd34",
        dry_run: false,
        recreated: [{ identity_id: "i-1", deleted_control_id: "c-old", new_control_id: "c-new" }],
      },
    });
    assert.match(md, /Reverts run 20261122-090000-cd34/);
    assert.match(md, /1 pruned controls were created again; each is a new control with a new id/);
    assert.match(md, /i-1 \| c-old \| c-new/);
    const dry = renderSummaryMarkdown({
      ...applied,
      mode: "revert",
      revert: { of_run_id: "r0", dry_run: true, deletes: 117, creates: 3, recreated: [] },
    });
    assert.match(
      dry,
      /Dry run: would delete 117 controls run r0 created, would re-create 3 it pruned/,
    );
    assert.match(dry, /nothing was sent/);
  });
});
