/**
 * plan, apply and reconcile: the stages wired together. Each stage persists what the next reads
 * (source rows → snapshot → findings → journal), so a crash loses nothing and a run can resume.
 */
import { sql } from "kysely";
import type { PlatformConfig, SourceConfig } from "../config.ts";
import type { DatabaseHandle } from "../db/connect.ts";
import { countFindings, findingChanges } from "../db/finding-queries.ts";
import {
  countActionsByStatus,
  countNotFinal,
  countPendingByAction,
  skipPending,
} from "../db/journal-queries.ts";
import { ensureSchema } from "../db/migrate.ts";
import { acquireRunLock } from "../db/run-lock.ts";
import {
  claimRun,
  finishRun,
  getRun,
  insertRun,
  latestRunningWriter,
  markRunsInterrupted,
  markStaleRunsInterrupted,
  newRunId,
  previousCompletedRun,
  saveRunCounts,
  touchRun,
  unfinishedWriterRuns,
} from "../db/run-queries.ts";
import type { RunMode, RunStatus } from "../db/schema.ts";
import { countCandidates } from "../db/snapshot-queries.ts";
import { ExitCode, UserError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { ClientMetrics, PlatformClient } from "../platform/index.ts";
import type { EndpointFigures, RunSummary } from "../reports/summary.ts";
import { FINDING_KINDS } from "./classify.ts";
import { type ExecutorContext, executeActions, resolveInDoubt } from "./executor.ts";
import { computeFindings } from "./findings.ts";
import type { Progress } from "./progress.ts";
import { reportDir, writeRunReport } from "./report.ts";
import { type ListingSettings, perIdentitySnapshot, type SnapshotContext } from "./snapshot.ts";
import type { SourceCounts } from "./source-stage.ts";
import { readPlatformState } from "./state-stage.ts";
import type { StateStrategy } from "./state-strategy.ts";

export const TOOL_VERSION = "0.1.0";

/** Most cursors of one listing at once: one, until listings are partitioned (issue 18). */
const LISTING_PARALLELISM = 1;

export interface PipelineOptions {
  readonly mode: RunMode;
  readonly state: StateStrategy;
  readonly all: boolean;
  readonly prune: boolean;
  readonly limit?: number;
  readonly reasonCode: string;
  readonly reason: string;
  /** apply: execute the creates of this earlier plan, re-verified first. */
  readonly planRunId?: string;
  /** apply/reconcile: continue this unfinished run. */
  readonly resumeRunId?: string;
  readonly out?: string;
}

export interface PipelineDeps {
  readonly handle: DatabaseHandle;
  readonly client: PlatformClient;
  readonly source: SourceConfig;
  readonly platform: PlatformConfig;
  readonly logger: Logger;
  readonly progress: Progress;
  readonly signal?: AbortSignal;
  /**
   * Asked once the writes are known, before any is sent. Resolves true to go ahead. The CLI wires
   * it to --yes or an interactive prompt.
   */
  readonly confirm: (counts: { creates: number; deletes: number }) => Promise<boolean>;
  /** Extra, secret-free options recorded with the run. */
  readonly recordedOptions?: Record<string, unknown>;
}

export interface PipelineResult {
  readonly summary: RunSummary;
  readonly exitCode: number;
}

const zeroFindings = () =>
  Object.fromEntries(FINDING_KINDS.map((k) => [k, 0])) as Record<string, number>;

function requestFigures(m: ClientMetrics): Record<string, EndpointFigures> {
  const out: Record<string, EndpointFigures> = {};
  for (const [k, v] of Object.entries(m.endpoints)) {
    out[k] = {
      count: v.requests,
      retries: v.retries,
      rate_limited: v.rateLimited,
      ambiguous: v.ambiguous,
      p50_ms: v.latencyMs.p50,
      p95_ms: v.latencyMs.p95,
    };
  }
  out["POST /oauth2/token"] = {
    count: m.token.requests,
    retries: 0,
    rate_limited: 0,
    ambiguous: 0,
    p50_ms: null,
    p95_ms: null,
  };
  return out;
}

/** Runs plan, apply or reconcile end to end and writes its reports. */
export async function runPipeline(
  deps: PipelineDeps,
  options: PipelineOptions,
): Promise<PipelineResult> {
  const { handle, logger } = deps;
  const db = handle.db;
  await ensureSchema(db, logger);
  const writer = options.mode !== "plan";
  const lock = writer ? await acquireRunLock(handle) : null;
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
  const { handle, logger, client } = deps;
  const db = handle.db;
  const started = Date.now();

  const execCtx = (runId: string): ExecutorContext => ({
    db,
    client,
    runId,
    logger,
    progress: deps.progress,
    signal: deps.signal,
    concurrency: deps.platform.concurrency,
    reasonCode: options.reasonCode,
    reason: options.reason,
    limit: options.limit,
  });

  // Writers first settle what a crashed writer left behind.
  if (options.mode !== "plan") {
    const unfinished = (await unfinishedWriterRuns(db)).filter((r) => r.id !== options.resumeRunId);
    await markStaleRunsInterrupted(db, options.resumeRunId);
    if (unfinished.length > 0 && options.mode === "apply") {
      const r = unfinished[unfinished.length - 1]!;
      const left = await countNotFinal(db, r.id);
      throw new UserError(
        `Run ${r.id} (${r.mode}, started ${r.started_at.toISOString()}) did not finish: ${left} actions are not final. Resume it first with: controls-migrate ${r.mode} --resume ${r.id}`,
      );
    }
    for (const r of unfinished) {
      logger.warn(`Settling unfinished run ${r.id} left by a crashed process before reconciling`);
      await resolveInDoubt(execCtx(r.id), r.id);
      await skipPending(db, r.id, "superseded");
      await markRunsInterrupted(db, [r.id]);
    }
  }

  let runId: string;
  let sourceCounts: SourceCounts = { rowsRead: 0, candidates: 0, anomalies: 0 };
  let strategy: string | null = null;
  let platformState: RunSummary["platform_state"] = null;

  if (options.resumeRunId) {
    const run = await getRun(db, options.resumeRunId);
    if (!run)
      throw new UserError(
        `--resume ${options.resumeRunId}: no such run. List runs with: controls-migrate runs`,
      );
    if (run.mode !== options.mode) {
      throw new UserError(
        `--resume ${run.id}: that is a ${run.mode} run; resume it with: controls-migrate ${run.mode} --resume ${run.id}`,
      );
    }
    if (run.status === "completed")
      throw new UserError(`--resume ${run.id}: the run already completed; nothing to resume.`);
    runId = run.id;
    const prior = (run.counts ?? {}) as Record<string, number>;
    sourceCounts = {
      rowsRead: prior.source_rows_read ?? 0,
      candidates: prior.source_candidates ?? 0,
      anomalies: prior.source_anomalies ?? 0,
    };
    strategy = (run.summary as Partial<RunSummary> | null)?.strategy ?? null;
    platformState = (run.summary as Partial<RunSummary> | null)?.platform_state ?? null;
    await claimRun(db, runId);
    logger.info(`Resuming run ${runId}`);
    const settled = await resolveInDoubt(execCtx(runId));
    if (settled > 0) logger.info(`Verified ${settled} actions whose outcome was unknown`);
  } else {
    runId = newRunId();
    await insertRun(db, {
      id: runId,
      mode: options.mode,
      parentRunId: options.planRunId ?? null,
      options: { ...options, ...deps.recordedOptions },
      toolVersion: TOOL_VERSION,
    });
    logger.info(`Run ${runId} (${options.mode}) started`);
    const snapCtx: SnapshotContext = {
      db,
      client,
      source: deps.source,
      runId,
      logger,
      progress: deps.progress,
      listing: listingSettings(deps.platform),
      signal: deps.signal,
    };
    const stopHeartbeat = startHeartbeat(deps, runId);
    try {
      if (options.planRunId) {
        sourceCounts = await adoptPlan(deps, runId, options.planRunId);
        strategy = "per-identity (re-verify the plan)";
        await perIdentitySnapshot(snapCtx);
      } else {
        const read = await readPlatformState(snapCtx, {
          requested: options.state,
          writes: options.mode !== "plan",
          prune: options.mode === "reconcile" && options.prune,
        });
        sourceCounts = read.source;
        strategy = read.state.strategy;
        platformState = read.state;
      }
      await saveRunCounts(db, runId, {
        source_rows_read: sourceCounts.rowsRead,
        source_candidates: sourceCounts.candidates,
        source_anomalies: sourceCounts.anomalies,
      });
      await computeFindings(db, runId, {
        journalCreates: options.mode !== "plan",
        journalDeletes: options.mode === "reconcile" && options.prune,
        unlistedHoldNoSellOnly: strategy === "filtered",
      });
    } catch (err) {
      await failRun(deps, runId, deps.signal?.aborted ? "interrupted" : "failed");
      throw err;
    } finally {
      stopHeartbeat();
    }
  }

  if (options.mode !== "plan") {
    const { creates, deletes } = await countPendingByAction(db, runId);
    if (creates + deletes > 0) {
      const ok = await deps.confirm({ creates, deletes });
      if (!ok) {
        await failRun(deps, runId, "interrupted");
        throw new UserError(
          `Not confirmed: nothing was written. Resume later with: controls-migrate ${options.mode} --resume ${runId}`,
        );
      }
      const stopHeartbeat = startHeartbeat(deps, runId);
      try {
        await executeActions(execCtx(runId), creates + deletes);
      } catch (err) {
        await failRun(deps, runId, deps.signal?.aborted ? "interrupted" : "failed");
        throw err;
      } finally {
        stopHeartbeat();
      }
    }
  }

  return finish(deps, options, runId, started, sourceCounts, strategy, platformState);
}

/** Listings read with the run's budget; at most --concurrency cursors, as requests are bounded so. */
function listingSettings(platform: PlatformConfig): ListingSettings {
  return {
    rate: platform.rate,
    maxParallel: Math.max(1, Math.min(LISTING_PARALLELISM, platform.concurrency)),
    retryBaseMs: platform.retryBaseMs,
  };
}

/** Marks the run alive every 10 s (shown when another writer finds the lock held). */
function startHeartbeat(deps: PipelineDeps, runId: string): () => void {
  const timer = setInterval(() => void touchRun(deps.handle.db, runId).catch(() => {}), 10_000);
  timer.unref();
  return () => clearInterval(timer);
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
  await sql`
    insert into controls_migration.source_rows (run_id, seq, identity_id, user_disabled, admin_disabled, anomaly, anomaly_detail, valid)
    select ${runId}, s.seq, s.identity_id, s.user_disabled, s.admin_disabled, s.anomaly, s.anomaly_detail, s.valid
    from controls_migration.source_rows s
    where s.run_id = ${planRunId} and s.valid and exists (
      select 1 from controls_migration.findings f
      where f.run_id = ${planRunId} and f.identity_id = s.identity_id and f.finding = 'missing_client_control')
  `.execute(db);
  const candidates = await countCandidates(db, runId);
  deps.logger.info(
    `Loaded ${candidates} identities with a create to do from plan ${planRunId}; re-verifying each before writing`,
  );
  return { rowsRead: candidates, candidates, anomalies: 0 };
}

async function failRun(deps: PipelineDeps, runId: string, status: RunStatus): Promise<void> {
  const code = status === "interrupted" ? ExitCode.interrupted : ExitCode.failed;
  await finishRun(deps.handle.db, runId, {
    status,
    exitCode: code,
    counts: {},
    summary: null,
  }).catch(() => {});
}

async function finish(
  deps: PipelineDeps,
  options: PipelineOptions,
  runId: string,
  started: number,
  source: SourceCounts,
  strategy: string | null,
  platformState: RunSummary["platform_state"],
): Promise<PipelineResult> {
  const db = deps.handle.db;
  const findings = { ...zeroFindings(), ...(await countFindings(db, runId)) };
  const outcomes = await countActionsByStatus(db, runId);
  const notFinal = await countNotFinal(db, runId);
  // A create answered 404 found an identity the platform does not know: a report-only finding
  // (how the filtered strategy learns existence), not an action to retry.
  const failed = Object.entries(outcomes)
    .filter(([k]) => k.startsWith("failed") && k !== "failed:identity_not_found")
    .reduce((n, [, v]) => n + v, 0);
  const interrupted = deps.signal?.aborted === true;

  const reportable = Object.entries(findings)
    .filter(([k]) => k !== "in_sync")
    .reduce((n, [, v]) => n + v, 0);
  let exitCode: number;
  if (interrupted) exitCode = ExitCode.interrupted;
  else if (options.mode === "plan") exitCode = reportable > 0 ? ExitCode.findings : ExitCode.ok;
  else if (failed > 0 || notFinal > 0) exitCode = ExitCode.actionsFailed;
  else if (options.mode === "apply") exitCode = ExitCode.ok;
  else {
    // reconcile: what is left once our own work is done is for people.
    const ownWork =
      (outcomes["succeeded:created"] ?? 0) +
      (outcomes["succeeded:adopted"] ?? 0) +
      (outcomes["succeeded:deleted"] ?? 0) +
      (outcomes["succeeded:already_deleted"] ?? 0);
    exitCode = reportable - ownWork > 0 ? ExitCode.findings : ExitCode.ok;
  }

  let changes: RunSummary["changes"] = null;
  if (options.mode === "reconcile") {
    const prev = await previousCompletedRun(db, "reconcile", runId);
    if (prev) {
      const c = await findingChanges(db, runId, prev.id);
      changes = {
        previous_run_id: prev.id,
        new_findings: c.newFindings,
        resolved_findings: c.resolvedFindings,
      };
    } else changes = { previous_run_id: null, new_findings: reportable, resolved_findings: 0 };
  }

  const finishedAt = Date.now();
  const duration = (finishedAt - started) / 1000;
  const actionsDone = Object.entries(outcomes)
    .filter(([k]) => k.startsWith("succeeded") || k.startsWith("failed"))
    .reduce((n, [, v]) => n + v, 0);
  // A run that leaves actions in doubt is not complete: the next apply points at it and --resume
  // settles those actions by looking at the platform.
  const status: RunStatus = interrupted ? "interrupted" : notFinal > 0 ? "failed" : "completed";
  const summary = await writeRunReport(
    db,
    {
      run_id: runId,
      mode: options.mode,
      status,
      started_at: new Date(started).toISOString(),
      finished_at: new Date(finishedAt).toISOString(),
      duration_s: Math.round(duration * 10) / 10,
      strategy,
      platform_state: platformState ?? null,
      source: {
        rows_read: source.rowsRead,
        candidates: source.candidates,
        anomalies: source.anomalies,
      },
      findings,
      outcomes,
      requests: requestFigures(deps.client.metrics()),
      throughput: {
        identities_per_s: Math.round((source.rowsRead / Math.max(duration, 0.001)) * 10) / 10,
        actions_per_s: Math.round((actionsDone / Math.max(duration, 0.001)) * 10) / 10,
      },
      changes,
      exit_code: exitCode,
    },
    reportDir(runId, options.out),
    options.all,
  );
  const counts = {
    ...findings,
    ...outcomes,
    source_rows_read: source.rowsRead,
    source_candidates: source.candidates,
    source_anomalies: source.anomalies,
  };
  await finishRun(db, runId, { status, exitCode, counts, summary });
  return { summary, exitCode };
}
