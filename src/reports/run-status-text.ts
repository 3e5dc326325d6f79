/**
 * `status` as a person reads it: a few lines per run (`status --json` prints the view as is).
 */
import { escapeInvisible as visible } from "../visible-text.ts";

/** What only the running process knows, reported once a second. */
export interface LiveReport {
  /** Actions finished per second over the last 10 s (or since writing began). */
  readonly rate_per_s: number;
  /** Writes are held (pause, throttle file, time window). */
  readonly paused: boolean;
  /** What holds them, in words. */
  readonly held_by: readonly string[];
  /** The write path's current budget, requests/s (after any set-rate, or a 429's halving). */
  readonly rate_budget: number;
  readonly requests: {
    readonly rate_limited: number;
    readonly retries: number;
    readonly ambiguous: number;
  };
  /** The run's stage (`reading the source`, ..., `writing`, `reporting`); absent from older runs. */
  readonly stage?: string;
}

/** `status --json`: one object per run. */
export interface RunStatusView {
  readonly run_id: string;
  readonly mode: string;
  readonly status: string;
  readonly dry_run: boolean;
  readonly pid: number;
  readonly host: string;
  readonly started_at: string;
  readonly heartbeat_at: string | null;
  readonly heartbeat_age_s: number | null;
  /** What a running run is doing: reading the source, the platform, classifying, writing, reporting. */
  readonly stage: string | null;
  readonly actions: {
    readonly total: number;
    /** Final: succeeded, failed or skipped. */
    readonly done: number;
    readonly pending: number;
    readonly in_flight: number;
    readonly ambiguous: number;
    readonly succeeded: number;
    readonly failed: number;
    readonly skipped: number;
  };
  /**
   * Actions finished per second over the last 10 s, as the progress line shows it, never above
   * `rate_budget` (the window's average of a budget just lowered is shown as the budget: no more
   * can be sent); 0 when the run is not running.
   */
  readonly rate_per_s: number;
  /** Seconds until the actions left are done at the current rate; null while held or idle. */
  readonly eta_s: number | null;
  readonly paused: boolean;
  readonly held_by: readonly string[];
  readonly rate_budget: number;
  readonly requests: LiveReport["requests"];
  /** When the running process last reported (null: it never did, or this is its own view). */
  readonly reported_at: string | null;
}

const ago = (s: number | null) => (s === null ? "never" : `${s} s ago`);

function duration(s: number): string {
  if (s < 90) return `${s} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
}

/** The writes line: held, flowing, not yet (a stage before writing), or none (not running). */
function writesLine(v: RunStatusView, before: boolean): string {
  if (v.status !== "running") return "Writes: none (the run is not running).";
  if (v.paused) return `Writes: HELD: ${v.held_by.map((h) => visible(h)).join("; ") || "paused"}.`;
  if (before) return `Writes: none yet (the run is ${v.stage ?? "starting"}).`;
  return v.stage === "reporting" ? "Writes: done; the run writes its report." : "Writes: flowing.";
}

/**
 * True while a running run is in a stage before its writes: one it names (reading, classifying:
 * its actions, if any, are still being journaled), or none yet with no action journaled (a run
 * that just started, before it notes its first stage).
 */
const beforeWrites = (v: RunStatusView): boolean =>
  v.status === "running" &&
  (v.stage === null ? v.actions.total === 0 : v.stage !== "writing" && v.stage !== "reporting");

/**
 * `status` as text. Before a run writes (reading, classifying) it names the stage and shows no
 * rate or ETA, and no action counts until actions are journaled; ambiguous outcomes are counted once, the journal's.
 *
 * @example
 *   renderRunStatus(view) // "Run 20261122-101500-cd34: apply, running (writing) ..."
 */
export function renderRunStatus(v: RunStatusView): string {
  const a = v.actions;
  const live = v.status === "running";
  const before = beforeWrites(v);
  const eta = v.eta_s === null ? (live ? "unknown while held or idle" : "-") : duration(v.eta_s);
  const stage = live && v.stage ? ` (${v.stage})` : "";
  const head = `Run ${v.run_id}: ${v.mode}${v.dry_run ? " (dry run)" : ""}, ${v.status}${stage}; pid ${v.pid} on ${visible(v.host)}, started ${v.started_at}, heartbeat ${ago(v.heartbeat_age_s)}.`;
  const body = before
    ? [
        a.total === 0
          ? `Actions: none yet (journaled once the platform's state is classified); write budget ${v.rate_budget} requests/s.`
          : `Actions: ${a.total} journaled so far, none sent (sent once the platform's state is read and classified); write budget ${v.rate_budget} requests/s.`,
      ]
    : [
        `Actions: ${a.done} / ${a.total} done (${a.succeeded} succeeded, ${a.failed} failed, ${a.skipped} skipped); ${a.pending} pending, ${a.in_flight} in flight, ${a.ambiguous} ambiguous.`,
        `Rate: ${v.rate_per_s} writes/s over the last 10 s; budget ${v.rate_budget} requests/s; ETA ${eta}.`,
      ];
  return [
    head,
    ...body,
    `Requests so far: ${v.requests.rate_limited} answered 429, ${v.requests.retries} retries.`,
    writesLine(v, before),
  ].join("\n");
}
