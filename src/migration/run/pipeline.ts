/**
 * plan, apply and reconcile: the stages wired together. Each stage persists what the next reads
 * (source rows → snapshot → findings → journal), so a crash loses nothing and a run can resume.
 * Orchestration only: the run's life is in run-lifecycle.ts, the exit-code policy in exit-code.ts,
 * the summary in run-summary.ts.
 */

import { ensureSchema } from "../../db/connection/migrate.ts";
import { acquireRunLock } from "../../db/connection/run-lock.ts";
import { countPendingByAction, serverTimeAgo } from "../../db/journal/journal-queries.ts";
import { finishRun, latestRunningWriter } from "../../db/journal/run-queries.ts";
import { runWorld } from "../../db/journal/run-world-queries.ts";
import { analyzeRunTables } from "../../db/journal/snapshot-queries.ts";
import { saveRequestSeries } from "../../db/report-queries/request-series-queries.ts";
import { Interrupted, throwIfStartupInterrupted, UserError } from "../../errors.ts";
import type { RunSummary } from "../../reports/summary.ts";
import { executeActions } from "../execute/executor.ts";
import { waitPolicy } from "../execute/platform-wait.ts";
import { reverifyPending } from "../execute/reverify.ts";
import { readSinceLast } from "../read/since-last.ts";
import type { SourceCounts } from "../read/source-stage.ts";
import { type PlatformStateSummary, readPlatformState } from "../read/state-stage.ts";
import { ReadStageChannel } from "../steer/read-stage-channel.ts";
import { noteStage } from "../steer/run-stage.ts";
import {
  executorContext,
  type PipelineDeps,
  type PipelineOptions,
  sinceLastSettings,
  snapshotContext,
} from "./pipeline-context.ts";
import { adoptPlan, checkPlanRun } from "./plan-adoption.ts";
import { reportDir, reportStageSignal, writeRunReport } from "./report.ts";
import {
  type ClaimedRun,
  claimNewRun,
  claimResumedRun,
  closeDeclined,
  recordRead,
  resumeCommand,
  settleResumedRun,
  settleUnfinishedWriters,
  whileAlive,
} from "./run-lifecycle.ts";
import { settingChangesForSummary } from "./run-settings.ts";
import { buildRunSummary } from "./run-summary.ts";
import { runVerdict } from "./run-verdict.ts";
import { recordReportInterrupted, recordUnreported } from "./unreported-run.ts";
import { assessWorld, finalTally } from "./world-delta.ts";
import { handOverToNextWriter, takeOverFromLastWriter } from "./writer-handover.ts";

export type { PendingWrites, PipelineDeps, PipelineOptions } from "./pipeline-context.ts";

/** A run with how its platform state was read (a resumed run's came with its first attempt). */
type ReadRun = ClaimedRun & { readonly platformState?: PlatformStateSummary };

export interface PipelineResult {
  readonly summary: RunSummary;
  readonly exitCode: number;
  /** Set when the run was interrupted with actions left: the command that continues it. */
  readonly resumeCommand?: string;
}

/** Runs plan, apply or reconcile end to end and writes its reports. */
export async function runPipeline(
  deps: PipelineDeps,
  options: PipelineOptions,
): Promise<PipelineResult> {
  const db = deps.handle.db;
  await ensureSchema(db, deps.logger);
  const writer = options.mode !== "plan";
  const lock = writer ? await acquireRunLock(deps.handle) : null;
  if (writer && !lock) {
    const holder = await latestRunningWriter(db);
    const who = holder
      ? `run ${holder.id} (${holder.mode}, pid ${holder.pid} on ${holder.host}, started ${holder.started_at.toISOString()})`
      : "another process";
    throw new UserError(
      `Another apply/reconcile is running on this database: ${who}. Wait for it to finish.`,
    );
  }
  if (!writer) return runLocked(deps, options);
  let runId: string | undefined;
  const onRunStarted = (id: string) => {
    runId = id;
    deps.onRunStarted?.(id);
  };
  try {
    await takeOverFromLastWriter(deps);
    return await runLocked({ ...deps, onRunStarted }, options);
  } finally {
    if (runId) await handOverToNextWriter(deps, runId);
    await lock?.release();
  }
}

/**
 * Settles what a crashed writer left, claims the run (new or resumed), then, with the heartbeat on
 * and any failure recorded on the run: reads (or settles the resumed run's doubts), confirms and
 * executes the writes, and closes the run with its report.
 */
async function runLocked(deps: PipelineDeps, options: PipelineOptions): Promise<PipelineResult> {
  const startedMs = Date.now();
  if (options.mode !== "plan") await settleUnfinishedWriters(deps, options);
  if (options.run.plan) await checkPlanRun(deps, options, options.run.plan);
  const resumeId = options.run.resume;
  // A signal heard while the schema was migrated or the lock taken: no run is claimed after it.
  throwIfStartupInterrupted(deps.signal, "while the command was starting");
  const claimed = resumeId
    ? await claimResumedRun(deps, options, resumeId)
    : { id: await claimNewRun(deps, options), source: null, strategy: null };
  deps.onRunStarted?.(claimed.id);
  // PGlite: one process holds the folder; read commands ask this one through the local channel.
  const readStage = deps.localChannelDir
    ? new ReadStageChannel(deps.handle.db, claimed.id, deps.localChannelDir, deps.logger)
    : undefined;
  const served: PipelineDeps = readStage ? { ...deps, readStage } : deps;
  try {
    return await whileAlive(served, options, claimed.id, async () => {
      let run: ReadRun = claimed;
      if (resumeId) await settleResumedRun(served, options, claimed.id);
      else run = await readNewRun(served, options, claimed.id);
      if (options.mode !== "plan") await executeConfirmed(served, options, run.id);
      return finish(served, options, run, startedMs);
    });
  } finally {
    await readStage?.stop();
  }
}

/** A new run: reads the source and the platform, and computes findings (and the journal). */
async function readNewRun(
  deps: PipelineDeps,
  options: PipelineOptions,
  runId: string,
): Promise<ReadRun> {
  const { source, strategy, platformState } = await readStages(deps, options, runId);
  await noteStage(deps.handle.db, runId, "classifying");
  // An adopted plan's state is re-read after the confirmation: its delta is not this run's.
  if (options.mode !== "plan" && !options.run.plan) {
    await assessWorld(deps, options, runId, strategy);
  }
  await recordRead(deps, runId, source, strategy);
  return { id: runId, source, strategy, platformState };
}

/** The source pass and the platform snapshot, by the strategy chosen (or the plan re-verified). */
async function readStages(
  deps: PipelineDeps,
  options: PipelineOptions,
  runId: string,
): Promise<{ source: SourceCounts; strategy: string; platformState?: PlatformStateSummary }> {
  const snap = snapshotContext(deps, options, runId);
  if (options.run.plan) {
    const source = await adoptPlan(deps, runId, options.run.plan);
    return { source, strategy: "the plan's (re-read after the confirmation)" };
  }
  const stateOptions = {
    requested: options.run.state,
    writes: options.mode !== "plan",
    prune: options.mode === "reconcile" && options.run.prune,
    waitForPlatform: waitPolicy(options.run.waitForPlatform, options.run.waitForPlatformS),
  };
  const read = options.run.sinceLast
    ? await readSinceLast(snap, stateOptions, sinceLastSettings(options))
    : await readPlatformState(snap, stateOptions);
  return { source: read.source, strategy: read.state.strategy, platformState: read.state };
}

/**
 * Asks for confirmation of the pending writes, then executes them. Not confirmed (or Ctrl-C at the
 * prompt): nothing was sent, the run is closed as declined.
 */
async function executeConfirmed(
  deps: PipelineDeps,
  options: PipelineOptions,
  runId: string,
): Promise<void> {
  const { creates, deletes } = await countPendingByAction(deps.handle.db, runId);
  if (creates + deletes === 0) return;
  if (!(await deps.confirm({ creates, deletes }))) {
    await closeDeclined(deps, runId);
    const what = `nothing was written; run ${runId} is closed as declined and the next ${options.mode} starts afresh`;
    if (deps.signal?.aborted) throw new Interrupted(`Interrupted at the confirmation: ${what}.`);
    throw new UserError(`Not confirmed: ${what}.`);
  }
  // The executor's steering owns the local channel while it writes.
  await deps.readStage?.suspend();
  try {
    await executeApproved(deps, options, runId, creates + deletes);
  } finally {
    deps.readStage?.resume();
  }
}

/** The confirmed writes: an adopted plan's state read again first, then the journal executed. */
async function executeApproved(
  deps: PipelineDeps,
  options: PipelineOptions,
  runId: string,
  writes: number,
): Promise<void> {
  const ctx = executorContext(deps, options, runId);
  if (options.run.plan) {
    // The plan was read before this confirmation approved it: read it again, now, before sending.
    const before = await serverTimeAgo(deps.handle.db, 0);
    await reverifyPending(
      { ...ctx, listing: snapshotContext(deps, options, runId).listing },
      runId,
      {
        before,
      },
    );
    const left = await countPendingByAction(deps.handle.db, runId);
    await executeActions(ctx, left.creates + left.deletes);
    return;
  }
  await executeActions(ctx, writes);
}

/** Tallies the run, decides its exit code and status, writes its report and closes it. */
async function finish(
  deps: PipelineDeps,
  options: PipelineOptions,
  run: ReadRun,
  startedMs: number,
): Promise<PipelineResult> {
  const db = deps.handle.db;
  await noteStage(db, run.id, "reporting");
  // A signal heard from here stops the report at its next row (see writeRunReport); a run
  // stopped before it still writes its report, which names the resume.
  const signal = reportStageSignal(deps.signal);
  await deps.readStage?.publishNow(); // PGlite: status names the stage before any report is written
  const { figures, tally, changes, coverage, ledger } = await finalTally(deps, options, run);
  const verdict = await runVerdict(deps, options, run.id, tally, figures, coverage, ledger);
  const { exitCode, status, error, gap } = verdict;
  await saveRequestSeries(db, run.id, deps.client.metrics().series);
  // A plan's journal statistics (for the next runs) are taken beside its report, not before it.
  const analyzed = options.mode === "plan" ? analyzeRunTables(db, "journal") : Promise.resolve();
  analyzed.catch(() => {}); // awaited below; a failure surfaces there
  const counts = { ...figures.findings, ...figures.outcomes };
  const world = await runWorld(db, run.id);
  const built = buildRunSummary({
    runId: run.id,
    tally,
    status,
    exitCode,
    startedMs,
    finishedMs: Date.now(),
    strategy: run.strategy,
    platformState: run.platformState ?? null,
    source: run.source ?? { rowsRead: 0, candidates: 0, anomalies: 0 },
    sourceRelation: world?.source?.relation ?? null,
    figures,
    metrics: deps.client.metrics(),
    changes,
    coverage,
    ledgerError: gap,
  });
  const changed = deps.settingChanges ?? [];
  if (changed.length > 0) {
    Object.assign(built, { settings_changed_at_resume: settingChangesForSummary(changed) });
  }
  // A report that cannot be written (a full disk) leaves the run's counts recorded all the same.
  const dir = reportDir(run.id, options.run.out);
  const { all, force, out } = options.run;
  const summary = await writeRunReport(db, built, dir, all, force, signal).catch((err: unknown) =>
    signal?.aborted
      ? recordReportInterrupted(db, built, counts, out)
      : recordUnreported(db, built, counts, err),
  );
  await analyzed;
  await finishRun(db, run.id, { status, exitCode, counts, summary, error });
  const resumable = tally.interrupted && tally.unsettledActions > 0;
  return {
    summary,
    exitCode,
    ...(resumable ? { resumeCommand: resumeCommand(options.mode, run.id, deps.resumeFlags) } : {}),
  };
}
