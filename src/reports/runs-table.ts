/**
 * The `runs` listing: one aligned row per run under a header, with the run's error. A run still
 * marked running whose heartbeat is older than a minute is shown as stale: its process is
 * probably gone (killed, machine down), and the next apply/reconcile will close it.
 */
import type { ActionStatus } from "../db/schema.ts";
import { ExitCode } from "../errors.ts";

/** A run as the listing needs it (a `runs` row). */
export interface RunListing {
  readonly id: string;
  readonly mode: string;
  readonly status: string;
  readonly exit_code: number | null;
  readonly started_at: Date;
  readonly heartbeat_at: Date | null;
  readonly error: string | null;
  readonly counts: Record<string, number> | null;
}

/** An action's statuses: a count keyed by one of them (alone or as `status:outcome`) is an outcome. */
const ACTION_STATUSES: ReadonlySet<string> = new Set<ActionStatus>([
  "pending",
  "in_flight",
  "succeeded",
  "failed",
  "ambiguous",
  "skipped",
]);

/** True for a count of actions (`pending`, `succeeded:created`), false for a finding kind. */
export const isOutcomeKey = (k: string): boolean => ACTION_STATUSES.has(k.split(":")[0]!);

/**
 * The exit code shown: the one recorded, or 130 for an interrupted run no process closed (a forced
 * second Ctrl-C, a kill, a lost database: a later command marked it), as README's exit codes say.
 */
export function shownExitCode(r: Pick<RunListing, "status" | "exit_code">): number | null {
  return r.exit_code ?? (r.status === "interrupted" ? ExitCode.interrupted : null);
}

/** A running run whose heartbeat is older than this is shown as stale. */
export const STALE_AFTER_MS = 60_000;

/** The status shown: `stale (process gone?)` for a running run without a recent heartbeat. */
export function shownStatus(r: RunListing, now: Date): string {
  if (r.status !== "running") return r.status;
  const beat = (r.heartbeat_at ?? r.started_at).getTime();
  return now.getTime() - beat > STALE_AFTER_MS ? "stale (process gone?)" : "running";
}

const MAX_ERROR = 60;
const clip = (s: string) => (s.length > MAX_ERROR ? `${s.slice(0, MAX_ERROR - 1)}…` : s);
const oneLine = (s: string) => s.replace(/\s+/g, " ").trim();

/**
 * A run's counts split in two cells: findings (`kind=n`, in `findingOrder`, then any other kind by
 * name) and outcomes (`status:outcome=n` or `status=n` for actions without an outcome, such as
 * `pending` and `ambiguous`, by name). Zeros are left out; an empty cell is `-`.
 *
 * @example
 *   countCells({ in_sync: 2, "succeeded:created": 1 }, ["in_sync"]) // ["in_sync=2", "succeeded:created=1"]
 */
export function countCells(
  counts: Record<string, number> | null,
  findingOrder: readonly string[],
): [string, string] {
  const rank = (k: string) => {
    const i = findingOrder.indexOf(k);
    return i < 0 ? findingOrder.length : i;
  };
  const entries = Object.entries(counts ?? {}).filter(([, v]) => v > 0);
  const findings = entries
    .filter(([k]) => !isOutcomeKey(k))
    .sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  const outcomes = entries
    .filter(([k]) => isOutcomeKey(k))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const cell = (list: [string, number][]) => list.map(([k, v]) => `${k}=${v}`).join(" ") || "-";
  return [cell(findings), cell(outcomes)];
}

/**
 * The listing as text: a header row, then one row per run, columns aligned. Findings and outcomes
 * are separate columns, each in a fixed order (`findingOrder` for the findings).
 *
 * @example
 *   renderRunsTable(runs, new Date()).split("\n")[0] // "RUN  MODE  STATUS  EXIT  STARTED (UTC) ..."
 */
export function renderRunsTable(
  runs: readonly RunListing[],
  now: Date,
  findingOrder: readonly string[] = [],
): string {
  const header = [
    "RUN",
    "MODE",
    "STATUS",
    "EXIT",
    "STARTED (UTC)",
    "ERROR",
    "FINDINGS",
    "OUTCOMES",
  ];
  const rows = runs.map((r) => [
    r.id,
    r.mode,
    shownStatus(r, now),
    String(shownExitCode(r) ?? "-"),
    r.started_at.toISOString().slice(0, 19).replace("T", " "),
    r.error ? clip(oneLine(r.error)) : "-",
    ...countCells(r.counts, findingOrder),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}
