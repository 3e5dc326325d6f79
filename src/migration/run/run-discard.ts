/**
 * Giving up an unfinished run on purpose (`controls-migrate discard RUN_ID`). What may have been
 * written is settled against the platform first, exactly as `--resume` does, so nothing possibly
 * written is forgotten; then the rest is discarded and the run no longer blocks the next apply.
 */

import { ensureSchema } from "../../db/connection/migrate.ts";
import { acquireRunLock } from "../../db/connection/run-lock.ts";
import { countActionsPerStatus, skipPending } from "../../db/journal/journal-queries.ts";
import { claimRun, finishRun, getRun } from "../../db/journal/run-queries.ts";
import type { Run } from "../../db/schema.ts";
import { ExitCode, UserError } from "../../errors.ts";
import type { PipelineDeps, PipelineOptions } from "./pipeline-context.ts";
import { failRun, settleResumedRun } from "./run-lifecycle.ts";

export interface DiscardResult {
  readonly runId: string;
  /** Actions found done on the platform while settling, or done before. */
  readonly succeeded: number;
  /** Pending actions given up. */
  readonly discarded: number;
}

/** The run named, checked to be something to give up. */
async function discardableRun(deps: PipelineDeps, id: string): Promise<Run> {
  const run = await getRun(deps.handle.db, id);
  if (!run) throw new UserError(`No run "${id}". List runs with: controls-migrate runs`);
  if (run.mode === "plan") {
    throw new UserError(`Run ${id} is a plan: it wrote nothing and has nothing to discard.`);
  }
  if (["completed", "declined", "discarded"].includes(run.status)) {
    throw new UserError(`Run ${id} is ${run.status}; nothing to discard.`);
  }
  return run;
}

/**
 * Settles the run's in-doubt actions on the platform, then discards its pending ones and closes
 * it as `discarded`. Refuses (and discards nothing) while an action stays in doubt, which happens
 * when the platform cannot be asked. Takes the writer lock: a live run cannot be discarded.
 *
 * @example
 *   const { discarded } = await discardRun(deps, options, "20261122-101500-cd34");
 */
export async function discardRun(
  deps: PipelineDeps,
  options: PipelineOptions,
  id: string,
): Promise<DiscardResult> {
  const db = deps.handle.db;
  await ensureSchema(db, deps.logger);
  const lock = await acquireRunLock(deps.handle);
  if (!lock) {
    throw new UserError(
      "Another apply/reconcile is running on this database; a run can be discarded only while none is.",
    );
  }
  try {
    const run = await discardableRun(deps, id);
    await claimRun(db, id);
    deps.onRunStarted?.(id);
    try {
      await settleResumedRun(deps, options, id);
      const after = await countActionsPerStatus(db, id);
      const inDoubt = after.in_flight + after.ambiguous;
      if (inDoubt > 0) {
        throw new UserError(
          `${inDoubt} actions of run ${id} are still in doubt (the platform could not be asked); nothing was discarded. Try again once the platform answers.`,
        );
      }
      const discarded = await skipPending(db, id, "discarded");
      await finishRun(db, id, {
        status: "discarded",
        exitCode: run.exit_code ?? ExitCode.failed,
        error: `discarded: ${discarded} pending actions given up`,
      });
      return { runId: id, succeeded: after.succeeded, discarded };
    } catch (err) {
      await failRun(deps, id, deps.signal?.aborted ? "interrupted" : "failed", err);
      throw err;
    }
  } finally {
    await lock.release();
  }
}
