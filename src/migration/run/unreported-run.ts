/**
 * A run whose work is done but whose report could not be written (a full disk under --out, say):
 * it still records its true counts and its summary, so `runs` shows what it did and `report RUN`
 * can write the report elsewhere later. The run is closed as failed (exit 1): its report is missing.
 */
import type { Kysely } from "kysely";
import { finishRun } from "../../db/journal/run-queries.ts";
import type { Database } from "../../db/schema.ts";
import { ExitCode, Interrupted, UserError } from "../../errors.ts";
import type { RunSummary } from "../../reports/summary.ts";

/**
 * Records `summary` and `counts` on the run, closes it as failed with the error, and rethrows the
 * error, telling (for a UserError) how to write the report once there is room.
 *
 * @example
 *   await writeRunReport(db, built, dir, all).catch((err) => recordUnreported(db, built, counts, err));
 */
export async function recordUnreported(
  db: Kysely<Database>,
  summary: Omit<RunSummary, "reports">,
  counts: Record<string, number>,
  err: unknown,
): Promise<never> {
  const id = summary.run_id;
  const message = err instanceof Error ? err.message : String(err);
  const closed = { ...summary, status: "failed", exit_code: ExitCode.failed };
  await finishRun(db, id, {
    status: "failed",
    exitCode: ExitCode.failed,
    counts,
    summary: closed,
    error: message,
  }).catch(() => undefined);
  if (!(err instanceof UserError)) throw err;
  throw new UserError(
    `${message} Run ${id} is recorded with its counts (see controls-migrate runs); once there is room, write its report with: controls-migrate report ${id} --out DIR`,
  );
}

/**
 * A run stopped by a signal while it wrote its report: its work is done, its report is not. It is
 * recorded with its true counts and summary, closed as interrupted (exit 130), and the error
 * thrown tells how to write the report: `controls-migrate report RUN` (with `--out` when given).
 *
 * @example
 *   await writeRunReport(db, built, dir, all, false, signal)
 *     .catch((err) => (signal.aborted ? recordReportInterrupted(db, built, counts, out) : Promise.reject(err)));
 */
export async function recordReportInterrupted(
  db: Kysely<Database>,
  summary: Omit<RunSummary, "reports">,
  counts: Record<string, number>,
  out: string | undefined,
): Promise<never> {
  const id = summary.run_id;
  const message = `Interrupted while writing the report of run ${id}: its work is recorded, its report is not`;
  await finishRun(db, id, {
    status: "interrupted",
    exitCode: ExitCode.interrupted,
    counts,
    summary: { ...summary, status: "interrupted", exit_code: ExitCode.interrupted },
    error: message,
  }).catch(() => undefined);
  const where = out === undefined ? "" : ` --out ${shellWord(out)}`;
  throw new Interrupted(message, `controls-migrate report ${id}${where}`);
}

/** `word` as one shell word: quoted when it holds anything but safe characters. */
const shellWord = (word: string) =>
  /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
