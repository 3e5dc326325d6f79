/**
 * What `status` shows of a run: read from the database (journal counts, the run's row, its control
 * row) and from what the running process alone knows (its live report: write rate, 429s, holds).
 * The running process builds the same view for the status file of an embedded database.
 */
import type { Kysely } from "kysely";
import type { StatusControl, StatusRun } from "../../db/connection/status-query.ts";
import { countActionsPerStatus } from "../../db/journal/journal-queries.ts";
import { getRunControl } from "../../db/journal/run-control-queries.ts";
import type { ActionStatus, Database, Run } from "../../db/schema.ts";
import type { LiveReport, RunStatusView } from "../../reports/run-status-text.ts";
import { shownRate } from "./progress-rate.ts";

export type { LiveReport, RunStatusView } from "../../reports/run-status-text.ts";
/** `status` and the progress line cap their rate with the one function. */
export { shownRate } from "./progress-rate.ts";

/** A live report older than this says nothing about now (the process reports every second). */
const REPORT_FRESH_MS = 5_000;

const round1 = (n: number) => Math.round(n * 10) / 10;

/**
 * The status of `run`. `live` is the running process's own report (its view for the status file),
 * or how to take it once the database is read, so that its rate is as of the view's counts and
 * of the moment the view is written, however long a busy database took to answer; `now` likewise.
 * Without it, the report it left in the database is used while fresh.
 *
 * @example
 *   const view = await readRunStatus(db, run, () => new Date());
 *   view.actions.done; view.eta_s;
 */
export async function readRunStatus(
  db: Kysely<Database>,
  run: Run,
  now: Date | (() => Date),
  live?: LiveReport | (() => LiveReport),
): Promise<RunStatusView> {
  const counts = await countActionsPerStatus(db, run.id);
  const control = await getRunControl(db, run.id);
  const at = typeof now === "function" ? now() : now;
  return runStatusView(run, counts, control, at, typeof live === "function" ? live() : live);
}

/**
 * The status view of a run from what the database holds of it: pure, so that `status` on
 * PostgreSQL can read all of it in one statement (`db/connection/status-query.ts`).
 */
export function runStatusView(
  run: StatusRun,
  counts: Readonly<Record<ActionStatus, number>>,
  control: StatusControl | undefined,
  now: Date,
  live?: LiveReport,
): RunStatusView {
  const stored = control?.report as LiveReport | null | undefined;
  const fresh =
    stored &&
    control?.reported_at &&
    now.getTime() - control.reported_at.getTime() <= REPORT_FRESH_MS;
  const running = run.status === "running";
  const report = live ?? (running && fresh ? stored : undefined);
  const optionRate = Number((run.options as { rate?: unknown }).rate) || 0;
  const paused = report?.paused ?? control?.paused ?? false;
  const done = counts.succeeded + counts.failed + counts.skipped;
  const left = counts.pending + counts.in_flight + counts.ambiguous;
  // Totals and the budget stay true after the run stopped: its last report holds them.
  const budget = (live ?? stored)?.rate_budget ?? control?.rate_budget ?? optionRate;
  const stage = running ? (live?.stage ?? stored?.stage ?? null) : null;
  // Writing over (reporting), the last report's rate is no longer what is sent.
  const rate = running && stage !== "reporting" ? shownRate(report?.rate_per_s ?? 0, budget) : 0;
  return {
    run_id: run.id,
    mode: run.mode,
    status: run.status,
    dry_run: run.dry_run,
    pid: run.pid,
    host: run.host,
    started_at: run.started_at.toISOString(),
    heartbeat_at: run.heartbeat_at?.toISOString() ?? null,
    // The stage stays true however old the note: it is written at each change, not each second.
    stage,
    heartbeat_age_s: run.heartbeat_at
      ? Math.max(0, Math.round((now.getTime() - run.heartbeat_at.getTime()) / 1000))
      : null,
    actions: {
      total: done + left,
      done,
      pending: counts.pending,
      in_flight: counts.in_flight,
      ambiguous: counts.ambiguous,
      succeeded: counts.succeeded,
      failed: counts.failed,
      skipped: counts.skipped,
    },
    rate_per_s: round1(rate),
    eta_s: left === 0 ? 0 : running && !paused && rate > 0 ? Math.round(left / rate) : null,
    paused,
    held_by: report?.held_by ?? (control?.paused ? ["paused"] : []),
    rate_budget: budget,
    requests: (live ?? stored)?.requests ?? { rate_limited: 0, retries: 0, ambiguous: 0 },
    reported_at: live ? null : (control?.reported_at?.toISOString() ?? null),
  };
}
