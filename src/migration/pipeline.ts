/**
 * plan, apply and reconcile: the stages wired together. Each stage persists what the next reads
 * (source rows → snapshot → findings → journal), so a crash loses nothing and a run can resume.
 * Orchestration only: the run's life is in run-lifecycle.ts, the exit-code policy in exit-code.ts,
 * the summary in run-summary.ts.
 */
import { countPendingByAction } from "../db/journal-queries.ts";
import { ensureSchema } from "../db/migrate.ts";
import { copyPlanCreateCandidates } from "../db/plan-queries.ts";
import { saveRequestSeries } from "../db/request-series-queries.ts";
import { acquireRunLock } from "../db/run-lock.ts";
import { finishRun, getRun, latestRunningWriter } from "../db/run-queries.ts";
import { countCandidates } from "../db/snapshot-queries.ts";
import { countSource } from "../db/source-reader.ts";
import { UserError } from "../errors.ts";
import type { RunSummary } from "../reports/summary.ts";
import { executeActions } from "./executor.ts";
import { closingStatus, exitCodeFor } from "./exit-code.ts";
import { computeFindings } from "./findings.ts";
import {
  executorContext,
  type PipelineDeps,
  type PipelineOptions,
  snapshotContext,
} from "./pipeline-context.ts";
import { createProgress } from "./progress.ts";
import { reportDir, writeRunReport } from "./report.ts";
import {
  type ClaimedRun,
  claimNewRun,
  failRun,
  recordRead,
  resumeRun,
  settleUnfinishedWriters,
  whileAlive,
} from "./run-lifecycle.ts";
import { buildRunSummary, readRunFigures, reconcileChanges, tallyOf } from "./run-summary.ts";
import {
  chooseStrategy,
  listPlatform,
  perIdentitySnapshot,
  settleBulkSnapshot,
} from "./snapshot.ts";
import { loadSource, type SourceCounts } from "./source-stage.ts";

export type { PendingWrites, PipelineDeps, PipelineOptions } from "./pipeline-context.ts";

export interface PipelineResult {
  readonly summary: RunSummary;
  readonly exitCode: number;
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
  try {
    return await runLocked(deps, options);
  } finally {
    await lock?.release();
  }
}

async function runLocked(deps: PipelineDeps, options: PipelineOptions): Promise<PipelineResult> {
  const started = Date.now();
  if (options.mode !== "plan") await settleUnfinishedWriters(deps, options);
  const run = options.run.resume
    ? await resumeRun(deps, options, options.run.resume)
    : await readNewRun(deps, options);
  if (options.mode !== "plan") await executeConfirmed(deps, options, run.id);
  return finish(deps, options, run, started);
}

/** A new run: reads the source and the platform, then computes findings (and the journal). */
async function readNewRun(deps: PipelineDeps, options: PipelineOptions): Promise<ClaimedRun> {
  const runId = await claimNewRun(deps, options);
  return whileAlive(deps, runId, async () => {
    const { source, strategy } = await readStages(deps, options, runId);
    await recordRead(deps, runId, source, strategy);
    await computeFindings(deps.handle.db, runId, {
      journalCreates: options.mode !== "plan",
      journalDeletes: options.mode === "reconcile" && options.run.prune,
    });
    return { id: runId, source, strategy };
  });
}

/** The source pass and the platform snapshot, by the strategy chosen (or the plan re-verified). */
async function readStages(
  deps: PipelineDeps,
  options: PipelineOptions,
  runId: string,
): Promise<{ source: SourceCounts; strategy: string }> {
  const db = deps.handle.db;
  const snap = snapshotContext(deps, options, runId);
  if (options.run.plan) {
    const source = await adoptPlan(deps, runId, options.run.plan);
    await perIdentitySnapshot(snap);
    return { source, strategy: "per-identity (re-verify the plan)" };
  }
  // Counting first checks the relation and columns before any request, and sizes `auto`.
  const known = await countSource(db, options.source);
  const choice = chooseStrategy(options.run.state, {
    sourceRows: known.total,
    candidates: known.anyFlag,
  });
  deps.logger.info(
    `Reading platform state with the ${choice.strategy} strategy (${choice.reason})`,
  );
  if (choice.strategy === "bulk") {
    // The listing waits on the rate budget; the source pass on the database: overlap them.
    const quiet = createProgress({ enabled: false, logger: deps.logger });
    const [source] = await Promise.all([
      loadSource(db, options.source, runId, quiet, deps.signal),
      listPlatform(snap, known.total),
    ]);
    await settleBulkSnapshot(snap);
    return { source, strategy: choice.strategy };
  }
  const source = await loadSource(db, options.source, runId, deps.progress, deps.signal);
  await perIdentitySnapshot(snap);
  return { source, strategy: choice.strategy };
}

/** apply --plan P: the new run takes P's candidates with a create to do, to be re-verified. */
async function adoptPlan(
  deps: PipelineDeps,
  runId: string,
  planRunId: string,
): Promise<SourceCounts> {
  const db = deps.handle.db;
  const plan = await getRun(db, planRunId);
  if (!plan)
    throw new UserError(`--plan ${planRunId}: no such run. List runs with: controls-migrate runs`);
  if (plan.mode !== "plan" || plan.status !== "completed") {
    throw new UserError(
      `--plan ${planRunId}: that run is a ${plan.status} ${plan.mode}, not a completed plan.`,
    );
  }
  await copyPlanCreateCandidates(db, runId, planRunId);
  const candidates = await countCandidates(db, runId);
  deps.logger.info(
    `Loaded ${candidates} identities with a create to do from plan ${planRunId}; re-verifying each before writing`,
  );
  return { rowsRead: candidates, candidates, anomalies: 0 };
}

/** Asks for confirmation of the pending writes, then executes them. */
async function executeConfirmed(
  deps: PipelineDeps,
  options: PipelineOptions,
  runId: string,
): Promise<void> {
  const { creates, deletes } = await countPendingByAction(deps.handle.db, runId);
  if (creates + deletes === 0) return;
  if (!(await deps.confirm({ creates, deletes }))) {
    await failRun(deps, runId, "interrupted");
    throw new UserError(
      `Not confirmed: nothing was written. Resume later with: controls-migrate ${options.mode} --resume ${runId}`,
    );
  }
  await whileAlive(deps, runId, () =>
    executeActions(executorContext(deps, options, runId), creates + deletes),
  );
}

/** Tallies the run, decides its exit code and status, writes its report and closes it. */
async function finish(
  deps: PipelineDeps,
  options: PipelineOptions,
  run: ClaimedRun,
  startedMs: number,
): Promise<PipelineResult> {
  const db = deps.handle.db;
  const figures = await readRunFigures(db, run.id);
  const tally = tallyOf(options.mode, deps.signal?.aborted === true, figures);
  const exitCode = exitCodeFor(tally);
  const status = closingStatus(tally);
  await saveRequestSeries(db, run.id, deps.client.metrics().series);
  const summary = await writeRunReport(
    db,
    buildRunSummary({
      runId: run.id,
      tally,
      status,
      exitCode,
      startedMs,
      finishedMs: Date.now(),
      strategy: run.strategy,
      source: run.source ?? { rowsRead: 0, candidates: 0, anomalies: 0 },
      figures,
      metrics: deps.client.metrics(),
      changes: await reconcileChanges(db, run.id, tally),
    }),
    reportDir(run.id, options.run.out),
    options.run.all,
  );
  const counts = { ...figures.findings, ...figures.outcomes };
  await finishRun(db, run.id, { status, exitCode, counts, summary });
  return { summary, exitCode };
}
