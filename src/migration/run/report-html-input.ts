/**
 * What report.html shows besides the diff rows, read from the database: the API the run talked
 * to, the client's per-second request series, where its invalid source rows are in the source,
 * and for a reconcile the first findings that are
 * new or resolved since the previous one.
 */
import type { Kysely } from "kysely";
import { getRun } from "../../db/journal/run-queries.ts";
import { findingDeltaRows } from "../../db/report-queries/finding-delta-queries.ts";
import { readRequestSeries } from "../../db/report-queries/request-series-queries.ts";
import type { Database } from "../../db/schema.ts";
import { invalidSourceRowSeqs } from "../../db/source/source-row-queries.ts";
import type { HtmlReportInput } from "../../reports/html/report-page.ts";
import { HTML_ROW_LIMIT } from "../../reports/html/write-report-html.ts";
import type { RunSummary } from "../../reports/summary.ts";
import { TOOL_VERSION } from "../../version.ts";

/** How many new and how many resolved findings report.html lists (the totals are all shown). */
export const CHANGES_LISTED = 1000;

/**
 * Gathers report.html's input for a run whose summary is written.
 *
 * @example
 *   const input = await htmlReportInput(db, summary);
 */
export async function htmlReportInput(
  db: Kysely<Database>,
  summary: RunSummary,
): Promise<HtmlReportInput> {
  const run = await getRun(db, summary.run_id);
  const apiUrl = run?.options?.api_url;
  const prev = summary.changes?.since_run_id;
  return {
    summary,
    apiUrl: typeof apiUrl === "string" ? apiUrl : null,
    series: await readRequestSeries(db, summary.run_id),
    changes: prev
      ? {
          added: await findingDeltaRows(db, summary.run_id, prev, "added", CHANGES_LISTED),
          resolved: await findingDeltaRows(db, summary.run_id, prev, "resolved", CHANGES_LISTED),
        }
      : null,
    toolVersion: TOOL_VERSION,
    invalidRowSeqs: await invalidSourceRowSeqs(db, summary.run_id, HTML_ROW_LIMIT),
  };
}
