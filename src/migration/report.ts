import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Kysely } from "kysely";
import { type DiffRecord, diffPage } from "../db/finding-queries.ts";
import type { Database } from "../db/schema.ts";
import { type DiffRow, writeDiffCsv } from "../reports/csv.ts";
import { writeReportHtml } from "../reports/html/write-report-html.ts";
import { type RunSummary, writeSummaries } from "../reports/summary.ts";
import { htmlReportInput } from "./report-html-input.ts";

/**
 * What a finding asks for when no journal entry exists yet (plan runs). Whether a control may be
 * pruned is the diff rules' verdict, stored with the finding; it is never re-derived here.
 */
function intendedAction(r: DiffRecord): string | null {
  if (r.finding === "missing_client_control") return "create";
  if (r.prunable) return "delete_with_prune";
  return null;
}

function toDiffRow(r: DiffRecord): DiffRow {
  return {
    run_id: r.run_id,
    identity_id: r.identity_id,
    user_disabled: r.user_disabled,
    admin_disabled: r.admin_disabled,
    finding: r.finding,
    expected_type: r.expected_type,
    expected_set_by: r.expected_set_by,
    expected_is_overridable: r.expected_is_overridable,
    observed_control_id: r.observed_control_id,
    observed_set_by: r.observed_set_by,
    observed_is_overridable: r.observed_is_overridable,
    other_active_controls: r.other_active_controls,
    action: r.action ?? intendedAction(r),
    outcome: r.action ? (r.outcome ?? r.status) : r.detail,
    http_status: r.http_status,
    error: r.error,
    attempts: r.attempts,
    at: r.at,
  };
}

async function* diffRows(
  db: Kysely<Database>,
  runId: string,
  all: boolean,
): AsyncGenerator<DiffRow> {
  let after = 0;
  for (;;) {
    const page = await diffPage(db, runId, after, 1000, all);
    if (page.length === 0) return;
    after = page[page.length - 1]?.id ?? after;
    for (const r of page) yield toDiffRow(r);
  }
}

export function reportDir(runId: string, out?: string): string {
  return resolve(out ?? join("reports", runId));
}

/**
 * Writes `diff.csv` (streamed from the database), `summary.json`/`summary.md` and `report.html`
 * (the first diff rows streamed again) into `dir`.
 * Regenerating a run's folder later gives the same files.
 */
export async function writeRunReport(
  db: Kysely<Database>,
  summary: Omit<RunSummary, "reports">,
  dir: string,
  all: boolean,
): Promise<RunSummary> {
  await mkdir(dir, { recursive: true });
  const csv = join(dir, "diff.csv");
  const rows = await writeDiffCsv(csv, diffRows(db, summary.run_id, all));
  const full: RunSummary = { ...summary, reports: { dir, diff_csv: csv, rows } };
  await writeSummaries(join(dir, "summary.json"), join(dir, "summary.md"), full);
  const html = join(dir, "report.html");
  await writeReportHtml(html, await htmlReportInput(db, full), diffRows(db, summary.run_id, all));
  return full;
}
