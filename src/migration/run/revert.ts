/**
 * `revert RUN_ID`: undoes what an apply or reconcile wrote. A revert is a run like any other (mode
 * `revert`, parent = the run it reverts): its journal is built from the reverted run's own
 * journal (a delete per control it created, a CLIENT SELL_ONLY create per control it pruned), then
 * executed by the executor like an apply's, with in_flight before each request, outcomes in doubt
 * verified, steering, `--limit` and `--resume`.
 */

import { ensureSchema } from "../../db/connection/migrate.ts";
import { acquireRunLock } from "../../db/connection/run-lock.ts";
import { countPendingByAction, skipPending } from "../../db/journal/journal-queries.ts";
import { countLimited, recreatedControls } from "../../db/journal/revert-queries.ts";
import {
  finishRun,
  latestRunningWriter,
  markStaleRunsInterrupted,
  touchRun,
} from "../../db/journal/run-queries.ts";
import { analyzeRunTables } from "../../db/journal/snapshot-queries.ts";
import { saveRequestSeries } from "../../db/report-queries/request-series-queries.ts";
import { countRevertWrites } from "../../db/report-queries/revert-diff-queries.ts";
import { UserError } from "../../errors.ts";
import type { ClientMetrics } from "../../platform/index.ts";
import { executeActions, resolveInDoubt } from "../execute/executor.ts";
import type { ExecutorContext } from "../execute/executor-context.ts";
import { ReadStageChannel } from "../steer/read-stage-channel.ts";
import { noteStage } from "../steer/run-stage.ts";
import { closingStatus, exitCodeFor } from "./exit-code.ts";
import { reportDir, reportStageSignal, writeRunReport } from "./report.ts";
import {
  claimNewRevert,
  claimResumedRevert,
  journalNewRevert,
  revertableRun,
} from "./revert-claim.ts";
import {
  type RevertDeps,
  type RevertOptions,
  type RevertResult,
  revertResumeCommand,
} from "./revert-context.ts";
import { declineRevert, RevertDeclined } from "./revert-declined.ts";
import { HEARTBEAT_MS } from "./run-lifecycle.ts";
import { buildRunSummary, readRunFigures, tallyOf } from "./run-summary.ts";
import { recordReportInterrupted } from "./unreported-run.ts";
import { handOverToNextWriter, takeOverFromLastWriter } from "./writer-handover.ts";

export type { RevertDeps, RevertOptions, RevertResult } from "./revert-context.ts";
export { revertResumeCommand } from "./revert-context.ts";

const NO_METRICS: ClientMetrics = {
  endpoints: {},
  token: { requests: 0, issued: 0, errors: 0 },
  budgets: {},
  series: [],
};

/**
 * Reverts run `o.ofRunId` (or resumes one of its reverts), holding the writer lock.
 *
 * @example
 *   const { summary, exitCode } = await runRevert(deps, { ofRunId, revert, platform });
 */
export async function runRevert(deps: RevertDeps, o: RevertOptions): Promise<RevertResult> {
  const db = deps.handle.db;
  await ensureSchema(db, deps.logger);
  const lock = await acquireRunLock(deps.handle);
  if (!lock) {
    const holder = await latestRunningWriter(db);
    const still = holder?.id === o.ofRunId;
    throw new UserError(
      still
        ? `Run ${o.ofRunId} is still going (pid ${holder?.pid} on ${holder?.host}): a run can be reverted once it has finished.`
        : `Another apply, reconcile or revert is running on this database${holder ? `: run ${holder.id} (${holder.mode}, pid ${holder.pid} on ${holder.host})` : ""}. Wait for it to finish.`,
    );
  }
  const client = deps.client;
  let id: string | undefined;
  try {
    if (client) await takeOverFromLastWriter({ handle: deps.handle, client });
    await markStaleRunsInterrupted(db, o.revert.resume);
    const of = await revertableRun(deps, o.ofRunId);
    const startedMs = Date.now();
    id = o.revert.resume
      ? await claimResumedRevert(deps, o, o.revert.resume)
      : await claimNewRevert(deps, o, of);
    deps.onRunStarted?.(id);
    return await runClaimed(deps, o, id, startedMs);
  } finally {
    if (client && id) await handOverToNextWriter({ handle: deps.handle, client }, id);
    await lock.release();
  }
}

/**
 * Revert `id`, claimed: journaled (when new), executed (or, dry, skipped) and reported, with the
 * heartbeat on and a failure recorded on the run. On PGlite the read commands (`runs`, `show`,
 * `report`, `status`) are answered through the local channel all along: by this process's
 * {@link ReadStageChannel} while it reads and reports, by the executor's steering while it writes.
 */
async function runClaimed(
  deps: RevertDeps,
  o: RevertOptions,
  id: string,
  startedMs: number,
): Promise<RevertResult> {
  const db = deps.handle.db;
  // The heartbeat tells `runs` and `status` the revert is alive, as for apply (run-lifecycle.ts).
  const heartbeat = setInterval(() => void touchRun(db, id).catch(() => {}), HEARTBEAT_MS);
  heartbeat.unref();
  const readStage = deps.localChannelDir
    ? new ReadStageChannel(db, id, deps.localChannelDir, deps.logger)
    : undefined;
  try {
    if (!o.revert.resume) await journalNewRevert(deps, o, id);
    // The revert's rows, and the reverted run's outcomes since it journaled, are news to the
    // planner: without fresh statistics (PGlite has no autovacuum) its diff query rescans the
    // reverted run once per row, 215 s instead of 2 s for 6,058 controls.
    await analyzeRunTables(db, "journal");
    if (!o.revert.dryRun) await execute(deps, o, id, readStage);
    else await skipPending(db, id, "dry_run");
    return await finish(deps, o, id, startedMs);
  } catch (err) {
    const interrupted = deps.signal?.aborted === true;
    if (err instanceof RevertDeclined) throw err; // recorded `declined` already
    await finishRun(db, id, {
      status: interrupted ? "interrupted" : "failed",
      exitCode: interrupted ? 130 : 1,
      error: err instanceof Error ? err.message : String(err),
    }).catch(() => {});
    throw err;
  } finally {
    clearInterval(heartbeat);
    await readStage?.stop();
  }
}

/**
 * Settles what a crash left in doubt, confirms, and executes the pending writes; the executor's
 * steering owns the local channel while it writes (`readStage` suspended meanwhile).
 */
async function execute(
  deps: RevertDeps,
  o: RevertOptions,
  runId: string,
  readStage: ReadStageChannel | undefined,
): Promise<void> {
  const client = deps.client;
  const platform = o.platform;
  if (!client || !platform) throw new Error("a revert that writes needs the platform");
  const ctx: ExecutorContext = {
    db: deps.handle.db,
    client,
    runId,
    logger: deps.logger,
    progress: deps.progress,
    ...(deps.signal ? { signal: deps.signal } : {}),
    options: {
      run: { ...o.revert, reason: `revert of ${o.ofRunId}` },
      platform,
    },
    undo: true,
    ...(deps.localChannelDir ? { localChannelDir: deps.localChannelDir } : {}),
  };
  const settled = await resolveInDoubt(ctx);
  if (settled > 0) deps.logger.info(`Verified ${settled} actions whose outcome was unknown`);
  const { creates, deletes } = await countPendingByAction(deps.handle.db, runId);
  if (creates + deletes === 0) return;
  if (!(await deps.confirm({ creates, deletes }))) {
    await declineRevert(deps.handle.db, runId, o.ofRunId, deps.signal?.aborted === true);
  }
  await readStage?.suspend();
  try {
    await executeActions(ctx, creates + deletes);
  } finally {
    readStage?.resume();
  }
}

async function finish(
  deps: RevertDeps,
  o: RevertOptions,
  runId: string,
  startedMs: number,
): Promise<RevertResult> {
  const db = deps.handle.db;
  await noteStage(db, runId, "reporting");
  // A signal heard from here stops the report at its next row (see writeRunReport); a revert
  // stopped before it still writes its report, which names the resume.
  const signal = reportStageSignal(deps.signal);
  if (!o.revert.dryRun) await analyzeRunTables(db, "journal"); // its outcomes, as they came
  const figures = await readRunFigures(db, runId);
  const tally = tallyOf("revert", deps.signal?.aborted === true, figures);
  const exitCode = exitCodeFor(tally);
  const status = closingStatus(tally);
  // report.html's timeline: the revert's own requests, per second, as an apply's are.
  if (deps.client) await saveRequestSeries(db, runId, deps.client.metrics().series);
  const built = {
    ...buildRunSummary({
      runId,
      tally,
      status,
      exitCode,
      startedMs,
      finishedMs: Date.now(),
      strategy: null,
      source: { rowsRead: 0, candidates: 0, anomalies: 0 },
      figures,
      metrics: deps.client?.metrics() ?? NO_METRICS,
      changes: null,
    }),
    revert: {
      of_run_id: o.ofRunId,
      dry_run: o.revert.dryRun,
      ...(await countRevertWrites(db, runId)),
      recreated: await recreatedControls(db, runId, o.ofRunId),
    },
  };
  const counts = { ...figures.findings, ...figures.outcomes };
  const summary = await writeRunReport(
    db,
    built,
    reportDir(runId, o.out),
    false,
    false,
    signal,
  ).catch((err: unknown) =>
    signal?.aborted ? recordReportInterrupted(db, built, counts, o.out) : Promise.reject(err),
  );
  await finishRun(db, runId, { status, exitCode, counts, summary });
  // Interrupted with work left, or limited: only `revert --resume` does the rest.
  const resumable =
    (tally.interrupted && tally.unsettledActions > 0) || (await countLimited(db, runId)) > 0;
  return {
    summary,
    exitCode,
    ...(resumable ? { resumeCommand: revertResumeCommand(o.ofRunId, runId) } : {}),
  };
}
