/**
 * `--metrics-file`: a run's figures in the Prometheus text exposition format, for node_exporter's
 * textfile collector. Rendered by prom-client (a Registry of its own, Gauges only: each value is
 * the last run's figure, replaced by the next run), written through a temporary file and a rename
 * so the collector never reads half a file.
 */
import { Gauge, Registry } from "prom-client";
import { writeFileAtomic } from "./report-files.ts";
import type { RunSummary } from "./summary.ts";

/** Every metric the file may hold: name, labels, help. The README lists the same. */
export const RUN_METRICS = {
  info: {
    name: "controls_migrate_last_run_info",
    labelNames: ["mode", "run_id", "status"],
    help: "The last run of this mode; always 1, its labels say which run and how it ended.",
  },
  exitCode: {
    name: "controls_migrate_last_run_exit_code",
    labelNames: ["mode"],
    help: "Exit code of the last run (0 done, 1 failed, 2 findings, 3 actions failed, 130 interrupted).",
  },
  duration: {
    name: "controls_migrate_last_run_duration_seconds",
    labelNames: ["mode"],
    help: "How long the last run took.",
  },
  finished: {
    name: "controls_migrate_last_run_timestamp_seconds",
    labelNames: ["mode"],
    help: "When the last run ended (Unix time).",
  },
  source: {
    name: "controls_migrate_source_rows",
    labelNames: ["mode", "kind"],
    help: "Source rows of the last run: kind read, candidates (a flag set) or anomalies.",
  },
  findings: {
    name: "controls_migrate_findings",
    labelNames: ["mode", "finding"],
    help: "Findings of the last run per category.",
  },
  outcomes: {
    name: "controls_migrate_action_outcomes",
    labelNames: ["mode", "status", "outcome"],
    help: "Actions of the last run per status and outcome; a create answered 404 is status not_on_platform (no failure), as summary.md and the exit code count it.",
  },
  requests: {
    name: "controls_migrate_requests",
    labelNames: ["mode", "endpoint", "status"],
    help: "Platform requests of the last run per endpoint and HTTP status (timeout, network or cancelled when no answer came; unknown for the token endpoint).",
  },
  rateLimited: {
    name: "controls_migrate_rate_limited_requests",
    labelNames: ["mode", "endpoint"],
    help: "Requests of the last run answered 429 Too Many Requests, per endpoint.",
  },
  retries: {
    name: "controls_migrate_request_retries",
    labelNames: ["mode", "endpoint"],
    help: "Requests of the last run sent again after a retryable failure, per endpoint.",
  },
  ambiguous: {
    name: "controls_migrate_ambiguous_requests",
    labelNames: ["mode", "endpoint"],
    help: "Requests of the last run whose outcome was unknown (timeout, dropped connection, 5xx on a write), per endpoint.",
  },
  lastReconcile: {
    name: "controls_migrate_last_successful_reconcile_timestamp_seconds",
    labelNames: [],
    help: "When the latest reconcile that completed with exit code 0 or 2 ended (Unix time); 0 if none has yet.",
  },
} as const;

/** A run that ended without a summary (it failed before its report was written). */
export interface FailedRun {
  readonly mode: RunSummary["mode"];
  readonly runId: string | null;
  readonly status: "failed" | "interrupted";
  readonly exitCode: number;
  readonly durationS: number;
  readonly finishedAt: Date;
}

export interface RunMetricsInput {
  /** The run's summary (summary.json), or what is known of a run that failed. */
  readonly run: RunSummary | FailedRun;
  /** From the database; undefined when it could not be read (the metric is then left out). */
  readonly lastSuccessfulReconcile: Date | null | undefined;
}

const seconds = (d: Date) => Math.round(d.getTime() / 1000);

/**
 * The `status` and `outcome` labels of a summary.json outcome key (`status:outcome`). A create
 * answered 404 (`failed:identity_not_found`) is no failure (README "Exit codes"; summary.md says
 * "not on the platform (404)"): it is `not_on_platform`, so `status="failed"` counts exactly the
 * failed actions that exit code 3 counts.
 *
 * @example
 *   outcomeLabels("failed:identity_not_found"); // { status: "not_on_platform", outcome: "identity_not_found" }
 */
export function outcomeLabels(key: string): { status: string; outcome: string } {
  const [status = key, ...rest] = key.split(":");
  const outcome = rest.join(":");
  if (status === "failed" && outcome === "identity_not_found")
    return { status: "not_on_platform", outcome };
  return { status, outcome };
}

/**
 * The metrics file's text.
 *
 * @example
 *   const text = await renderRunMetrics({ run: summary, lastSuccessfulReconcile: null });
 */
export async function renderRunMetrics(input: RunMetricsInput): Promise<string> {
  const registry = new Registry();
  const gauge = <K extends keyof typeof RUN_METRICS>(key: K) =>
    new Gauge({
      ...RUN_METRICS[key],
      labelNames: [...RUN_METRICS[key].labelNames],
      registers: [registry],
    });
  const r = input.run;
  const mode = r.mode;
  const summary = "run_id" in r ? r : null;
  gauge("info").set(
    { mode, run_id: summary?.run_id ?? (r as FailedRun).runId ?? "", status: r.status },
    1,
  );
  gauge("exitCode").set({ mode }, summary ? summary.exit_code : (r as FailedRun).exitCode);
  gauge("duration").set({ mode }, summary ? summary.duration_s : (r as FailedRun).durationS);
  gauge("finished").set(
    { mode },
    seconds(summary ? new Date(summary.finished_at) : (r as FailedRun).finishedAt),
  );
  if (summary) {
    const source = gauge("source");
    source.set({ mode, kind: "read" }, summary.source.rows_read);
    source.set({ mode, kind: "candidates" }, summary.source.candidates);
    source.set({ mode, kind: "anomalies" }, summary.source.anomalies);
    const findings = gauge("findings");
    for (const [finding, n] of Object.entries(summary.findings)) findings.set({ mode, finding }, n);
    const outcomes = gauge("outcomes");
    for (const [key, n] of Object.entries(summary.outcomes))
      outcomes.set({ mode, ...outcomeLabels(key) }, n);
    const [requests, rateLimited, retries, ambiguous] = [
      gauge("requests"),
      gauge("rateLimited"),
      gauge("retries"),
      gauge("ambiguous"),
    ];
    for (const [endpoint, f] of Object.entries(summary.requests)) {
      let answered = 0;
      for (const [status, n] of Object.entries(f.statuses ?? {})) {
        requests.set({ mode, endpoint, status }, n);
        answered += n;
      }
      if (f.count > answered)
        requests.set({ mode, endpoint, status: "unknown" }, f.count - answered);
      rateLimited.set({ mode, endpoint }, f.rate_limited);
      retries.set({ mode, endpoint }, f.retries);
      ambiguous.set({ mode, endpoint }, f.ambiguous);
    }
  }
  if (input.lastSuccessfulReconcile !== undefined) {
    const at = input.lastSuccessfulReconcile;
    gauge("lastReconcile").set(at ? seconds(at) : 0);
  }
  return registry.metrics();
}

/**
 * Renders the metrics and puts them at `path` atomically (temporary file in the same folder, then
 * a rename), as node_exporter's textfile collector requires.
 *
 * @example
 *   await writeRunMetrics("/var/lib/node_exporter/textfile/controls.prom", { run: summary,
 *     lastSuccessfulReconcile: new Date() });
 */
export async function writeRunMetrics(path: string, input: RunMetricsInput): Promise<void> {
  await writeFileAtomic(path, await renderRunMetrics(input));
}
