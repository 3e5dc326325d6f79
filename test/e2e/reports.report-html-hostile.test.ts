/**
 * Ids come from the user's database and the platform: report.html must show any of them as text,
 * visibly escaped, and never let one become markup or script. Checked in headless Chromium.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import type { DiffRow } from "../../src/reports/csv.ts";
import { writeReportHtml } from "../../src/reports/html/write-report-html.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
import {
  BROWSER_SKIP,
  openBrowser,
  type TestBrowser,
  waitForMatching,
} from "../helpers/browser.ts";

const HOSTILE = [
  "</script><script>alert(1)</script>",
  '"><img src=x onerror=alert(2)>',
  "'single' \"double\" `back`",
  "abc\u202Edef\u2066x",
  "bell\u0007esc\u001b[31mred",
  "<!-- comment",
  "line\u2028sep",
  "&amp; &lt;",
];

/** What each id must look like on the page: control and bidi characters as `\uXXXX`. */
const SHOWN = [
  "</script><script>alert(1)</script>",
  '"><img src=x onerror=alert(2)>',
  "'single' \"double\" `back`",
  "abc\\u202edef\\u2066x",
  "bell\\u0007esc\\u001b[31mred",
  "<!-- comment",
  "line\u2028sep",
  "&amp; &lt;",
];

const row = (id: string): DiffRow => ({
  run_id: "r",
  identity_id: id,
  user_disabled: true,
  admin_disabled: false,
  platform_user_disabled: false,
  platform_admin_disabled: false,
  finding: "missing_client_control",
  expected_type: "SELL_ONLY",
  expected_set_by: "CLIENT",
  expected_is_overridable: true,
  observed_control_id: null,
  observed_set_by: null,
  observed_is_overridable: null,
  other_active_controls: null,
  action: "create",
  outcome: "failed",
  http_status: 400,
  error: `<b>refused</b> ${id}`,
  attempts: 1,
  at: new Date(0),
});

const summary: RunSummary = {
  run_id: "20260101-000000-abcd",
  mode: "reconcile",
  status: "completed",
  started_at: "2026-01-01T00:00:00.000Z",
  finished_at: "2026-01-01T00:00:05.000Z",
  duration_s: 5,
  strategy: "per-identity",
  source: { rows_read: 8, candidates: 8, anomalies: 0 },
  findings: { missing_client_control: HOSTILE.length },
  outcomes: { "failed:invalid": HOSTILE.length },
  requests: {},
  throughput: { identities_per_s: 1.6, actions_per_s: 1.6 },
  changes: {
    since_run_id: "20251231-000000-abcd",
    outside: {},
    outside_total: 0,
    undone_total: 0,
    new_findings: 2,
    resolved_findings: 0,
    new_client_work: 0,
  },
  exit_code: 3,
  reports: { dir: ".", diff_csv: "./diff.csv", rows: HOSTILE.length },
};

async function* rows() {
  for (const id of HOSTILE) yield row(id);
}

describe("report.html with hostile identity ids, in headless Chromium", {
  skip: BROWSER_SKIP,
}, () => {
  let browser: TestBrowser;
  let dir: string;
  let url: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "cm-html-hostile-"));
    const path = join(dir, "report.html");
    await writeReportHtml(
      path,
      {
        summary,
        apiUrl: "https://api.example.com",
        series: [],
        changes: {
          added: HOSTILE.slice(0, 2).map((id) => ({
            identity_id: id,
            finding: "missing_client_control",
            owner: "CLIENT",
          })),
          resolved: [],
        },
        toolVersion: "test",
      },
      rows(),
    );
    url = pathToFileURL(path).href;
    browser = await openBrowser();
  });

  after(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("shows every id as text with control and bidi characters escaped, and runs nothing they hold", async () => {
    const w = await browser.open(url);
    const ids = await w.page.locator("#diff tbody tr td:nth-child(1)").allTextContents();
    assert.deepEqual(ids, SHOWN);
    const errors = await w.page.locator("#diff tbody tr td:nth-child(11)").allTextContents();
    assert.deepEqual(
      errors,
      SHOWN.map((id) => `<b>refused</b> ${id}`),
    );
    const added = await w.page.locator("#new-findings tbody tr td:nth-child(1)").allTextContents();
    assert.deepEqual(added, SHOWN.slice(0, 2));
    const elements = {
      img: await w.page.locator("img").count(),
      b: await w.page.locator("b").count(),
      scripts: await w.page.locator("script").count(),
    };
    assert.deepEqual(elements, { img: 0, b: 0, scripts: 2 });
    assert.deepEqual(w.problems, []);
    await w.page.close();
  });

  it("finds a hostile id with the free-text filter", async () => {
    const w = await browser.open(url);
    await w.page.fill("#filter-text", "onerror");
    await waitForMatching(w.page, "=", 1);
    assert.deepEqual(await w.page.locator("#diff tbody tr td:nth-child(1)").allTextContents(), [
      SHOWN[1],
    ]);
    assert.deepEqual(w.problems, []);
    await w.page.close();
  });
});
