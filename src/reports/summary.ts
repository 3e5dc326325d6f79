import { writeFile } from "node:fs/promises";

export interface EndpointFigures {
  readonly count: number;
  readonly retries: number;
  readonly rate_limited: number;
  readonly ambiguous: number;
  /** Exchanges by HTTP status (`"200"`), or by failure kind when no answer came (`"timeout"`). */
  readonly statuses: Record<string, number>;
  readonly p50_ms: number | null;
  readonly p95_ms: number | null;
}

/** summary.json; the key set is part of the tool's interface (README "Reports"). */
export interface RunSummary {
  readonly run_id: string;
  readonly mode: "plan" | "apply" | "reconcile";
  readonly status: string;
  readonly started_at: string;
  readonly finished_at: string;
  readonly duration_s: number;
  readonly strategy: string | null;
  readonly source: {
    readonly rows_read: number;
    readonly candidates: number;
    readonly anomalies: number;
  };
  readonly findings: Record<string, number>;
  readonly outcomes: Record<string, number>;
  readonly requests: Record<string, EndpointFigures>;
  readonly throughput: { readonly identities_per_s: number; readonly actions_per_s: number };
  readonly changes: {
    readonly previous_run_id: string | null;
    readonly new_findings: number;
    readonly resolved_findings: number;
  } | null;
  readonly exit_code: number;
  readonly reports: { readonly dir: string; readonly diff_csv: string; readonly rows: number };
}

const table = (head: string[], rows: (string | number)[][]) =>
  [
    `| ${head.join(" | ")} |`,
    `|${head.map(() => "---").join("|")}|`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");

/** The same content as summary.json, for people. */
export function renderSummaryMarkdown(s: RunSummary): string {
  const parts = [
    `# controls-migrate ${s.mode} ${s.run_id}`,
    "",
    `Status **${s.status}**, exit code ${s.exit_code}. Started ${s.started_at}, took ${s.duration_s.toFixed(1)} s.` +
      (s.strategy ? ` Platform state read with the ${s.strategy} strategy.` : ""),
    "",
    `Source: ${s.source.rows_read} rows read, ${s.source.candidates} candidates, ${s.source.anomalies} anomalies.`,
    "",
    "## Findings",
    "",
    table(
      ["finding", "count"],
      Object.entries(s.findings).map(([k, v]) => [`\`${k}\``, v]),
    ),
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
          ["endpoint", "count", "retries", "429s", "ambiguous", "p50 ms", "p95 ms"],
          Object.entries(s.requests).map(([k, v]) => [
            `\`${k}\``,
            v.count,
            v.retries,
            v.rate_limited,
            v.ambiguous,
            v.p50_ms ?? "",
            v.p95_ms ?? "",
          ]),
        ),
    "",
    `Throughput: ${s.throughput.identities_per_s.toFixed(1)} identities/s, ${s.throughput.actions_per_s.toFixed(1)} actions/s.`,
  ];
  if (s.changes) {
    parts.push(
      "",
      "## Since the previous reconcile",
      "",
      s.changes.previous_run_id
        ? `Compared with ${s.changes.previous_run_id}: ${s.changes.new_findings} new findings, ${s.changes.resolved_findings} resolved.`
        : "No previous reconcile to compare with.",
    );
  }
  parts.push("", `Diff: \`${s.reports.diff_csv}\` (${s.reports.rows} rows).`, "");
  return parts.join("\n");
}

export async function writeSummaries(
  jsonPath: string,
  mdPath: string,
  s: RunSummary,
): Promise<void> {
  await writeFile(jsonPath, `${JSON.stringify(s, null, 2)}\n`);
  await writeFile(mdPath, renderSummaryMarkdown(s));
}

/** A compact table for the terminal (stderr). */
export function renderSummaryTable(s: RunSummary): string {
  const rows = Object.entries(s.findings).filter(([, v]) => v > 0);
  const width = Math.max(8, ...rows.map(([k]) => k.length));
  const lines = [
    `${s.mode} ${s.run_id}: ${s.status} in ${s.duration_s.toFixed(1)} s (exit ${s.exit_code})`,
  ];
  for (const [k, v] of rows) lines.push(`  ${k.padEnd(width)}  ${String(v).padStart(8)}`);
  if (rows.length === 0) lines.push("  no findings");
  for (const [k, v] of Object.entries(s.outcomes))
    lines.push(`  action ${k.padEnd(width - 7)}  ${String(v).padStart(8)}`);
  lines.push(`  report: ${s.reports.dir}`);
  return lines.join("\n");
}
