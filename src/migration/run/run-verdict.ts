/**
 * How a finished run closes: its books checked first (exit 4 when they do not balance), then a run
 * that read none of its candidates fails (exit 1, naming the cause), else the exit-code policy.
 */
import { commonReadFailure } from "../../db/journal/finding-queries.ts";
import type { LedgerCounts } from "../../db/journal/ledger-queries.ts";
import { ExitCode } from "../../errors.ts";
import type { RunSummary } from "../../reports/summary.ts";
import { closingStatus, exitCodeFor, type RunTally, readOutage } from "./exit-code.ts";
import type { LedgerGap } from "./ledger.ts";
import type { PipelineDeps, PipelineOptions } from "./pipeline-context.ts";
import { runLedgerGap } from "./run-ledger.ts";
import type { RunFigures } from "./run-summary.ts";

export interface RunVerdict {
  readonly exitCode: ExitCode;
  readonly status: "completed" | "failed" | "interrupted";
  /** The run's error, recorded on it and logged: its books' gap, or a read outage. */
  readonly error: string | null;
  /** The books' first gap, when they do not balance. */
  readonly gap: LedgerGap | null;
}

/**
 * The exit code, status and error of a finished run; logs the error.
 *
 * @example
 *   const { exitCode, status, error } = await runVerdict(deps, options, runId, tally, figures, coverage, ledger);
 */
export async function runVerdict(
  deps: PipelineDeps,
  options: PipelineOptions,
  runId: string,
  tally: RunTally,
  figures: RunFigures,
  coverage: RunSummary["coverage"],
  ledger: Promise<LedgerCounts>,
): Promise<RunVerdict> {
  const db = deps.handle.db;
  // The books are checked before the exit code is chosen: exit 0 promises they balance.
  const prune = { prune: options.run.prune, pruneOrphans: options.run.pruneOrphans };
  const gap = tally.interrupted ? null : await runLedgerGap(ledger, options.mode, prune, figures);
  if (gap) {
    deps.logger.error(gap.message);
    return { exitCode: ExitCode.unbalanced, status: "failed", error: gap.message, gap };
  }
  const c = coverage ?? { candidates: 0, candidates_read: 0, read_failed: 0 };
  const counts = { candidates: c.candidates, read: c.candidates_read, readFailed: c.read_failed };
  const outage =
    tally.interrupted || readOutage(counts, null) === null
      ? null
      : readOutage(counts, await commonReadFailure(db, runId));
  if (outage) {
    deps.logger.error(outage);
    return { exitCode: ExitCode.failed, status: "failed", error: outage, gap: null };
  }
  return { exitCode: exitCodeFor(tally), status: closingStatus(tally), error: null, gap: null };
}
