/**
 * summary.md: the same content as summary.json, rendered for people as markdown (findings,
 * the three-way table, action outcomes, requests, throughput, the changes since the previous
 * writing run, a revert's figures, and the pauses and rate changes), with its table helper.
 */

import { runNotes } from "./run-notes.ts";
import {
  type ControlEventFigure,
  comparedNote,
  type RevertFigures,
  type RunSummary,
  revertLine,
} from "./summary.ts";
import { renderThreeWaySection } from "./three-way-section.ts";

const table = (head: string[], rows: (string | number)[][]) =>
  [
    `| ${head.join(" | ")} |`,
    `|${head.map(() => "---").join("|")}|`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");

/** A finding's count, or "not looked for" when the run's reads cannot see its kind (issue 50). */
const shown = (s: RunSummary, kind: string, n: number): string | number =>
  n === 0 && s.coverage?.not_looked_for.includes(kind) ? "not looked for" : n;

/** The same content as summary.json, for people. */
export function renderSummaryMarkdown(s: RunSummary): string {
  const parts = [
    `# controls-migrate ${s.mode} ${s.run_id}`,
    "",
    `Status **${s.status}**, exit code ${s.exit_code}. Started ${s.started_at}, took ${s.duration_s.toFixed(1)} s.` +
      (s.strategy ? ` Platform state read with the ${s.strategy} strategy.` : ""),
    "",
    ...(s.platform_state
      ? [
          `Why: ${s.platform_state.reason}.`,
          "",
          `Identity existence: ${s.platform_state.existence}.`,
          "",
        ]
      : []),
    `Source${s.source.relation ? ` ${s.source.relation}` : ""}: ${s.source.rows_read} rows read, ${s.source.candidates} candidates, ${s.source.anomalies} anomalies.`,
    "",
    ...runNotes(s).flatMap((note) => [note, ""]),
    "## Findings",
    "",
    s.mode !== "plan" && s.findings_left
      ? table(
          ["finding", "found", "left", "actions"],
          Object.entries(s.findings).map(([k, v]) => [
            `\`${k}\``,
            shown(s, k, v),
            shown(s, k, s.findings_left?.[k] ?? v),
            Object.entries(s.actions_by_finding?.[k] ?? {})
              .map(([label, n]) => `${n} ${label}`)
              .join(", "),
          ]),
        )
      : table(
          ["finding", "count"],
          Object.entries(s.findings).map(([k, v]) => [`\`${k}\``, shown(s, k, v)]),
        ),
    ...renderThreeWaySection(s.three_way),
    "",
    "## Action outcomes",
    "",
    Object.keys(s.outcomes).length === 0
      ? "No actions."
      : table(
          ["outcome", "count"],
          Object.entries(s.outcomes).map(([k, v]) => [k, v]),
        ),
    "",
    "## Requests",
    "",
    Object.keys(s.requests).length === 0
      ? "No platform requests."
      : table(
          ["endpoint", "count", "retries", "429s", "ambiguous", "anomalies", "p50 ms", "p95 ms"],
          Object.entries(s.requests).map(([k, v]) => [
            `\`${k}\``,
            v.count,
            v.retries,
            v.rate_limited,
            v.ambiguous,
            v.anomalies,
            v.p50_ms ?? "",
            v.p95_ms ?? "",
          ]),
        ),
    "",
    // A plan sends no writes: an "actions/s" figure would only ever read 0.0.
    s.mode === "plan"
      ? `Throughput: ${s.throughput.identities_per_s.toFixed(1)} identities/s.`
      : `Throughput: ${s.throughput.identities_per_s.toFixed(1)} identities/s, ${s.throughput.actions_per_s.toFixed(1)} actions/s.`,
  ];
  parts.push(...changesSection(s.changes));
  parts.push(...revertSection(s.revert), ...controlEventsSection(s.control_events));
  parts.push("", `Diff: \`${s.reports.diff_csv}\` (${s.reports.rows} rows).`, "");
  return parts.join("\n");
}

function changesSection(c: RunSummary["changes"]): string[] {
  if (!c) return [];
  if (!c.since_run_id) {
    return ["", "## Since the previous run", "", "No previous apply or reconcile to compare with."];
  }
  const kinds = Object.entries(c.outside).filter(([, n]) => n > 0);
  return [
    "",
    "## Since the previous run",
    "",
    `Compared with ${c.since_run_id} after its actions: ${c.outside_total} outside change${c.outside_total === 1 ? "" : "s"} (${c.undone_total} undoing the tool's writes), ${c.new_findings} new finding${c.new_findings === 1 ? "" : "s"}, ${c.resolved_findings} resolved${comparedNote(c)}.`,
    ...(kinds.length > 0 ? ["", table(["outside change", "count"], kinds)] : []),
  ];
}

/** How many re-created controls summary.md lists (summary.json lists them all). */
const RECREATED_SHOWN = 50;

function revertSection(r: RevertFigures | undefined): string[] {
  if (!r) return [];
  const lines = [
    "",
    "## Revert",
    "",
    r.dry_run
      ? `Dry run: ${revertLine(r).trim()}, from the journal of run ${r.of_run_id}; nothing was sent (diff.csv lists each control). Each control is re-read right before its delete in a real revert.`
      : `Reverts run ${r.of_run_id}: ${revertLine(r).trim()}. The controls it created are deleted (if still active, CLIENT, overridable and of the same id); the controls it pruned are created again as CLIENT SELL_ONLY with reason \`revert of ${r.of_run_id}\`.`,
  ];
  if (r.recreated.length > 0) {
    lines.push(
      "",
      `${r.recreated.length} pruned controls were created again; each is a new control with a new id:`,
      "",
      table(
        ["identity", "deleted control", "new control"],
        r.recreated
          .slice(0, RECREATED_SHOWN)
          .map((c) => [c.identity_id, c.deleted_control_id, c.new_control_id]),
      ),
    );
    if (r.recreated.length > RECREATED_SHOWN) {
      lines.push("", `(and ${r.recreated.length - RECREATED_SHOWN} more, in summary.json)`);
    }
  }
  return lines;
}

function controlEventsSection(events: readonly ControlEventFigure[] | undefined): string[] {
  if (!events || events.length === 0) return [];
  return [
    "",
    "## Pauses and rate changes",
    "",
    table(
      ["at", "who", "what"],
      events.map((e) => [
        e.at,
        `${e.who}${e.pid === null ? "" : ` (pid ${e.pid})`}`,
        [e.event === "set_rate" ? `set-rate ${e.rate}` : e.event, e.detail]
          .filter(Boolean)
          .join(": "),
      ]),
    ),
  ];
}
