/**
 * report.html's markup around the diff rows: the run at a glance (in the words of summary.md),
 * the charts, the requests, the changes since the previous reconcile, and the table's shell. The
 * rows themselves are streamed in between by `write-report-html.ts`.
 */
import { thousands } from "../../thousands.ts";
import { runNotes } from "../run-notes.ts";
import { comparedNote, type RunSummary, revertLine } from "../summary.ts";
import { html, SafeHtml } from "./html-text.ts";
import { findingsChart, outcomesChart, steerMarks } from "./report-charts.ts";
import { REPORT_JS } from "./report-script.ts";
import { REPORT_CSS } from "./report-style.ts";
import { threeWaySection } from "./three-way-html.ts";
import { type SeriesPoint, timelineChart } from "./timeline-chart.ts";

/** A finding that appeared or went away between two reconciles. */
export interface ChangedFinding {
  readonly identity_id: string | null;
  readonly finding: string;
  /** The owner the finding is about (expected or observed set_by), "" when none. */
  readonly owner: string;
}

/** What changed since the previous reconcile, with the first rows of each side. */
export interface ChangesDetail {
  readonly added: readonly ChangedFinding[];
  readonly resolved: readonly ChangedFinding[];
}

/** Everything report.html shows besides the diff rows. */
export interface HtmlReportInput {
  readonly summary: RunSummary;
  /** The platform's base URL the run talked to; shown without credentials, query or fragment. */
  readonly apiUrl: string | null;
  readonly series: readonly SeriesPoint[];
  /** Reconcile only: the first new and resolved findings (their totals are in the summary). */
  readonly changes: ChangesDetail | null;
  readonly toolVersion: string;
  /**
   * The source row (the reader's 1-based `seq`) of each `invalid_source_row` finding, in the
   * diff's order: the table shows it in the identity cell, so a row without a usable id can be
   * found in the source. Absent or short: the cell shows the id alone.
   */
  readonly invalidRowSeqs?: readonly number[];
}

/** A column label that may wrap after its underscores and spaces in a narrow column. */
const breakable = (label: string) =>
  label.split(/(?<=[_ ])/).map((part, i) => (i === 0 ? part : html`<wbr>${part}`));

/** The diff table's columns, in the order of each row array of `#diff-data`. */
export const TABLE_COLUMNS = [
  { key: "identity_id", label: "identity" },
  { key: "user_disabled", label: "user_disabled" },
  { key: "admin_disabled", label: "admin_disabled" },
  { key: "finding", label: "finding" },
  { key: "expected", label: "expected" },
  { key: "observed", label: "observed" },
  { key: "other_active_controls", label: "other controls" },
  { key: "action", label: "action" },
  { key: "outcome", label: "outcome" },
  { key: "http_status", label: "HTTP", num: true },
  { key: "error", label: "error" },
  { key: "attempts", label: "attempts", num: true },
] as const;

/** A URL without userinfo, query or fragment: nothing secret can ride along. */
export function displayUrl(url: string | null): string {
  if (!url) return "(not recorded)";
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === "/" ? "" : u.pathname}`;
  } catch {
    return "(unparseable URL)";
  }
}

const n = thousands;

/** The token endpoint's row of summary.json's requests: shown apart from the API's. */
const TOKEN_ENDPOINT = "POST /oauth2/token";

type EndpointRow = [string, RunSummary["requests"][string]];

function endpointRow([endpoint, f]: EndpointRow, token = false): SafeHtml {
  const statuses = Object.entries(f.statuses ?? {})
    .map(([code, count]) => `${code}×${count}`)
    .join(", ");
  const shown = token ? `${endpoint} (tokens, apart from the API's requests)` : endpoint;
  return html`<tr data-endpoint="${endpoint}"><td>${shown}</td><td class="num">${f.count}</td><td>${statuses || (token ? "-" : "")}</td><td class="num">${f.retries}</td><td class="num">${f.rate_limited}</td><td class="num">${f.ambiguous}</td><td class="num">${f.p50_ms ?? ""}</td><td class="num">${f.p95_ms ?? ""}</td></tr>`;
}

/**
 * The requests per endpoint: the API's, their total (the figure the timeline's caption gives),
 * then the token requests apart, as the caption says.
 */
function requestsTable(s: RunSummary): SafeHtml {
  const entries = Object.entries(s.requests);
  if (entries.length === 0) return html`<p>No platform requests.</p>`;
  const api = entries.filter(([e]) => e !== TOKEN_ENDPOINT);
  const token = entries.filter(([e]) => e === TOKEN_ENDPOINT);
  const total = api.reduce((sum, [, f]) => sum + f.count, 0);
  const sum = (k: "retries" | "rate_limited" | "ambiguous") =>
    api.reduce((acc, [, f]) => acc + f[k], 0);
  const totalRow = html`<tr class="total" data-api-requests="${total}"><th>API requests</th><td class="num">${total}</td><td></td><td class="num">${sum("retries")}</td><td class="num">${sum("rate_limited")}</td><td class="num">${sum("ambiguous")}</td><td></td><td></td></tr>`;
  return html`<table id="requests"><thead><tr><th>endpoint</th><th>count</th><th>statuses</th><th>retries</th><th>429s</th><th>ambiguous</th><th>p50 ms</th><th>p95 ms</th></tr></thead><tbody>${api.map((e) => endpointRow(e))}${totalRow}${token.map((e) => endpointRow(e, true))}</tbody></table>`;
}

function changedTable(id: string, rows: readonly ChangedFinding[], total: number): SafeHtml {
  if (total === 0) return html`<p class="muted">None.</p>`;
  const body = rows.map(
    (r) => html`<tr><td>${r.identity_id ?? ""}</td><td>${r.finding}</td><td>${r.owner}</td></tr>`,
  );
  const more =
    total > rows.length
      ? html`<p class="muted">The first ${n(rows.length)} of ${n(total)} are listed.</p>`
      : "";
  return html`<table id="${id}"><thead><tr><th>identity</th><th>finding</th><th>owner</th></tr></thead><tbody>${body}</tbody></table>${more}`;
}

/** The outside changes by kind, those that happened (changes.csv lists each). */
function outsideKinds(outside: Record<string, number>): SafeHtml | "" {
  const rows = Object.entries(outside).filter(([, v]) => v > 0);
  if (rows.length === 0) return "";
  const body = rows.map(([k, v]) => html`<tr><td>${k}</td><td class="num">${v}</td></tr>`);
  return html`<table id="outside-changes"><thead><tr><th>outside change</th><th>count</th></tr></thead><tbody>${body}</tbody></table>`;
}

function changesSection(i: HtmlReportInput): SafeHtml | "" {
  const c = i.summary.changes;
  if (!c) return "";
  if (!c.since_run_id) {
    return html`<h2>Since the previous run</h2><p id="changes">No previous apply or reconcile to compare with.</p>`;
  }
  return html`<h2>Since the previous run</h2>
<p id="changes" data-new="${c.new_findings}" data-resolved="${c.resolved_findings}" data-outside="${c.outside_total}" data-undone="${c.undone_total}">Compared with ${c.since_run_id} after its actions: ${c.outside_total} outside changes (${c.undone_total} undoing the tool's writes), ${c.new_findings} new findings, ${c.resolved_findings} resolved${comparedNote(c)}.</p>
${outsideKinds(c.outside)}
<h3>New findings</h3>${changedTable("new-findings", i.changes?.added ?? [], c.new_findings)}
<h3>Resolved findings</h3>${changedTable("resolved-findings", i.changes?.resolved ?? [], c.resolved_findings)}`;
}

/** Everything before the diff rows: head, summary, charts, requests, changes, table shell. */
export function renderPageHead(i: HtmlReportInput): string {
  const s = i.summary;
  const started = Math.floor(Date.parse(s.started_at) / 1000);
  const finished = Math.ceil(Date.parse(s.finished_at) / 1000);
  const strategy = s.strategy ? ` Platform state read with the ${s.strategy} strategy.` : "";
  const head = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>controls-migrate ${s.mode} ${s.run_id}</title>
<style>${new SafeHtml(REPORT_CSS)}</style></head>
<body><main>
<h1>controls-migrate ${s.mode} ${s.run_id}</h1>
<p id="headline">Status <span class="status status-${s.status}" id="run-status">${s.status}</span>, exit code <span id="exit-code">${s.exit_code}</span>. Started ${s.started_at}, took <span id="duration">${s.duration_s.toFixed(1)}</span> s.${strategy}</p>
<dl class="facts">
<dt>Mode</dt><dd id="mode">${s.mode}</dd>
<dt>Target API</dt><dd id="api-url" class="mono">${displayUrl(i.apiUrl)}</dd>
<dt>Finished</dt><dd>${s.finished_at}</dd>
${s.revert ? html`<dt>Revert</dt><dd id="revert-counts">${revertLine(s.revert).trim()}${s.revert.dry_run ? " (dry run: nothing sent)" : ""}.</dd>` : html`<dt>Source</dt><dd id="source">${n(s.source.rows_read)} rows read, ${n(s.source.candidates)} candidates, ${n(s.source.anomalies)} anomalies.</dd>`}
<dt>Throughput</dt><dd>${s.throughput.identities_per_s.toFixed(1)} identities/s, ${s.throughput.actions_per_s.toFixed(1)} actions/s.</dd>
</dl>
${runNotes(s).map((note) => html`<p class="note run-note">${note}</p>`)}
<h2>Findings and action outcomes</h2>
<div class="charts"><div>${findingsChart(s)}</div>
<div>${outcomesChart(s)}</div></div>
${threeWaySection(s.three_way)}
<h2>Requests over the run</h2>
${timelineChart(i.series, started, finished, steerMarks(s))}
${requestsTable(s)}
${changesSection(i)}
<section id="diff-section"><h2>Diff</h2>
<div class="filters">
<label>Finding <select id="filter-finding"><option value="">all</option></select></label>
<label>Outcome <select id="filter-outcome"><option value="">all</option></select></label>
<label>Text <input id="filter-text" type="search" placeholder="identity, control id, error..."></label>
</div>
<p id="diff-status" class="muted" aria-live="polite">The table needs JavaScript; diff.csv holds every row.</p>
<div class="scroll"><table id="diff"><thead><tr>${TABLE_COLUMNS.map((c) => html`<th scope="col" title="${c.label}"><button type="button">${breakable(c.label)}</button></th>`)}</tr></thead><tbody></tbody></table></div>
<div class="pager"><button type="button" id="page-prev">Previous</button><button type="button" id="page-next">Next</button></div></section>
<script type="application/json" id="diff-data">{"columns":${new SafeHtml(JSON.stringify(TABLE_COLUMNS))},"rows":[`;
  return head.value;
}

/** Everything after the diff rows: the note on what diff.csv holds beyond them, the script. */
export function renderPageTail(i: HtmlReportInput, shown: number): string {
  const total = i.summary.reports.rows;
  const more = Math.max(0, total - shown);
  const note =
    more > 0
      ? html`<p class="note" id="diff-more" data-shown="${shown}" data-more="${more}">The table holds the first ${n(shown)} rows; ${n(more)} more are in diff.csv (${n(total)} rows in all).</p>`
      : html`<p class="muted" id="diff-more" data-shown="${shown}" data-more="0">All ${n(shown)} rows of diff.csv are in the table.</p>`;
  return html`]}</script>
${note}
<footer>Written by controls-migrate ${i.toolVersion} from run ${i.summary.run_id}. Self-contained: no network access. diff.csv and summary.json are in the same folder.</footer>
</main><script>${new SafeHtml(REPORT_JS)}</script></body></html>
`.value;
}
