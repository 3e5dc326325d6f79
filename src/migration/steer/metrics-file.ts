/**
 * `--metrics-file PATH` at the end of a run: the run's figures (or what is known of a run that
 * failed) and the time of the last successful reconcile, for node_exporter's textfile collector.
 * A metrics file that cannot be written is reported as an error naming the flag; it never changes
 * the run's outcome or exit code (the run's work and its report are already saved).
 */
import type { Kysely } from "kysely";
import { lastSuccessfulReconcile } from "../../db/report-queries/metrics-queries.ts";
import type { Database, RunMode } from "../../db/schema.ts";
import { isDiskFull } from "../../disk-full.ts";
import { ExitCode, Interrupted } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import type { FailedRun } from "../../reports/run-metrics.ts";
import type { RunSummary } from "../../reports/summary.ts";

/**
 * Writes the metrics file, reading the last successful reconcile from `db` when it is reachable.
 *
 * @example
 *   await writeMetricsFile(config.metricsFile, handle.db, summary, logger);
 */
export async function writeMetricsFile(
  path: string,
  db: Kysely<Database> | null,
  run: RunSummary | FailedRun,
  logger: Logger,
): Promise<void> {
  let last: Date | null | undefined;
  try {
    last = db ? await lastSuccessfulReconcile(db) : undefined;
  } catch {
    last = undefined; // the database is what failed; the file still tells the run's end
  }
  try {
    // Loaded only for --metrics-file: prom-client costs every run's start-up otherwise.
    const { writeRunMetrics } = await import("../../reports/run-metrics.ts");
    await writeRunMetrics(path, { run, lastSuccessfulReconcile: last });
    logger.debug(`Wrote metrics to ${path}`);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    const why = isDiskFull(err) ? `${code}: no space left on the device holding it` : code;
    logger.error(`Could not write --metrics-file ${path} (${why}); the run itself is unaffected.`);
  }
}

/**
 * What is known of a run that threw: its mode, its id if it got one, and how it ended (the exit
 * code `run-command.ts` gives the same error: 130 when interrupted, else 1).
 *
 * @example
 *   const run = failedRun("plan", null, err, signal.aborted, startedMs);
 */
export function failedRun(
  mode: RunMode,
  runId: string | null,
  err: unknown,
  aborted: boolean,
  startedMs: number,
): FailedRun {
  const interrupted = aborted || err instanceof Interrupted;
  return {
    mode,
    runId,
    status: interrupted ? "interrupted" : "failed",
    exitCode: interrupted ? ExitCode.interrupted : ExitCode.failed,
    durationS: Math.round((Date.now() - startedMs) / 100) / 10,
    finishedAt: new Date(),
  };
}
