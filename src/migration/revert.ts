/**
 * `revert RUN_ID`: undoes what an apply or reconcile wrote. A revert is a run like any other (mode
 * `revert`, parent = the run it reverts): its journal is built from the reverted run's own
 * journal (a delete per control it created, a CLIENT SELL_ONLY create per control it pruned), then
 * executed by the executor like an apply's, with in_flight before each request, outcomes in doubt
 * verified, steering, `--limit` and `--resume`.
 */
import type { HoldConfig, PlatformConfig, RevertConfig } from "../config.ts";
import type { DatabaseHandle } from "../db/connect.ts";
import { countNotFinal, countPendingByAction, skipPending } from "../db/journal-queries.ts";
import { ensureSchema } from "../db/migrate.ts";
import { countRevertWrites } from "../db/revert-diff-queries.ts";
import {
  countLimited,
  journalRevert,
  recreatedControls,
  reopenLimited,
  revertsOf,
} from "../db/revert-queries.ts";
import { acquireRunLock } from "../db/run-lock.ts";
import {
  claimRun,
  finishRun,
  getRun,
  insertRun,
  latestRunningWriter,
  markStaleRunsInterrupted,
  newRunId,
  touchRun,
} from "../db/run-queries.ts";
import type { Run } from "../db/schema.ts";
import { UserError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { ClientMetrics, PlatformClient } from "../platform/index.ts";
import type { RunSummary } from "../reports/summary.ts";
import { TOOL_VERSION } from "../version.ts";
import { executeActions, resolveInDoubt } from "./executor.ts";
import type { ExecutorContext } from "./executor-context.ts";
import { closingStatus, exitCodeFor } from "./exit-code.ts";
import type { Progress } from "./progress.ts";
import { reportDir, writeRunReport } from "./report.ts";
import { declineRevert, RevertDeclined } from "./revert-declined.ts";
import { HEARTBEAT_MS } from "./run-lifecycle.ts";
import { buildRunSummary, readRunFigures, tallyOf } from "./run-summary.ts";

export interface RevertDeps {
  readonly handle: DatabaseHandle;
  /** Absent for a dry run, which sends nothing. */
  readonly client?: PlatformClient;
  readonly logger: Logger;
  readonly progress: Progress;
  readonly signal?: AbortSignal;
  readonly confirm: (writes: { creates: number; deletes: number }) => Promise<boolean>;
  readonly localChannelDir?: string;
  readonly onRunStarted?: (runId: string) => void;
}

export interface RevertOptions {
  readonly ofRunId: string;
  readonly revert: RevertConfig & HoldConfig;
  readonly platform?: PlatformConfig;
  /** Where reports go (`--out`), else `reports/<run-id>/`. */
  readonly out?: string;
}

export interface RevertResult {
  readonly summary: RunSummary;
  readonly exitCode: number;
  readonly resumeCommand?: string;
}

const NO_METRICS: ClientMetrics = {
  endpoints: {},
  token: { requests: 0, issued: 0, errors: 0 },
  budgets: {},
  series: [],
};

/** The command that continues revert `revertId` of run `ofRunId`. */
export const revertResumeCommand = (ofRunId: string, revertId: string) =>
  `controls-migrate revert ${ofRunId} --resume ${revertId} --yes`;

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
  try {
    await markStaleRunsInterrupted(db, o.revert.resume);
    const of = await revertableRun(deps, o.ofRunId);
    const startedMs = Date.now();
    const id = o.revert.resume
      ? await claimResumed(deps, o, o.revert.resume)
      : await claimNew(deps, o, of);
    deps.onRunStarted?.(id);
    // The heartbeat tells `runs` and `status` the revert is alive, as for apply (run-lifecycle.ts).
    const heartbeat = setInterval(() => void touchRun(db, id).catch(() => {}), HEARTBEAT_MS);
    heartbeat.unref();
    try {
      if (!o.revert.dryRun) await execute(deps, o, id);
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
    }
  } finally {
    await lock.release();
  }
}

/** The run to revert: a finished apply or reconcile, not yet reverted. */
async function revertableRun(deps: RevertDeps, ofRunId: string): Promise<Run> {
  const db = deps.handle.db;
  const run = await getRun(db, ofRunId);
  if (!run) throw new UserError(`No run "${ofRunId}". List runs with: controls-migrate runs`);
  if (run.mode === "revert") {
    throw new UserError(
      `Run ${run.id} is itself a revert (of ${run.parent_run_id}): reverting a revert is refused. To restore those controls, run apply or reconcile again.`,
    );
  }
  if (run.mode === "plan") {
    throw new UserError(
      `Run ${run.id} is a plan: it wrote nothing, so there is nothing to revert.`,
    );
  }
  const left = await countNotFinal(db, run.id);
  if (run.status === "running" || left > 0) {
    throw new UserError(
      `Run ${run.id} is still going (${run.status}, ${left} actions not final): finish it first (controls-migrate ${run.mode} --resume ${run.id}) or give it up (controls-migrate discard ${run.id}), then revert it.`,
    );
  }
  return run;
}

async function claimNew(deps: RevertDeps, o: RevertOptions, of: Run): Promise<string> {
  const db = deps.handle.db;
  if (!o.revert.dryRun) {
    const [earlier] = await revertsOf(db, of.id);
    if (earlier) {
      const limited = earlier.status === "completed" ? await countLimited(db, earlier.id) : 0;
      const resume = revertResumeCommand(of.id, earlier.id);
      throw new UserError(
        earlier.status === "completed" && limited === 0
          ? `Run ${of.id} was already reverted by run ${earlier.id} (finished ${earlier.finished_at?.toISOString() ?? "?"}): a second revert is refused.`
          : `Run ${of.id} already has a revert, ${earlier.id} (${earlier.status}${limited ? `, ${limited} left by --limit` : ""}); continue it with: ${resume}`,
      );
    }
  }
  const id = newRunId();
  await insertRun(db, {
    id,
    mode: "revert",
    parentRunId: of.id,
    dryRun: o.revert.dryRun,
    options: {
      mode: "revert",
      of_run_id: of.id,
      ...o.revert,
      pauseOutside: o.revert.pauseOutside?.text,
      ...(o.platform
        ? {
            api_url: o.platform.apiUrl,
            client_id: o.platform.clientId,
            rate: o.platform.rate,
            concurrency: o.platform.concurrency,
          }
        : {}),
    },
    toolVersion: TOOL_VERSION,
  });
  const n = await journalRevert(db, id, of.id);
  deps.onRunStarted?.(id); // before the line, so that a JSON log's first line of it has run_id
  deps.logger.info(
    `Run ${id} (revert${o.revert.dryRun ? ", dry run" : ""} of ${of.id}) started: ${n} writes of ${of.id} to undo`,
  );
  return id;
}

async function claimResumed(deps: RevertDeps, o: RevertOptions, id: string): Promise<string> {
  const db = deps.handle.db;
  const run = await getRun(db, id);
  if (run?.mode !== "revert" || run.parent_run_id !== o.ofRunId || run.dry_run) {
    throw new UserError(
      `--resume ${id}: that is not a revert of run ${o.ofRunId}. Its reverts are listed by: controls-migrate runs`,
    );
  }
  const limited = await reopenLimited(db, id);
  if (run.status === "completed" && limited === 0) {
    throw new UserError(`--resume ${id}: the revert is completed; nothing to resume.`);
  }
  await claimRun(db, id);
  deps.logger.info(`Resuming revert ${id} of run ${o.ofRunId}`);
  return id;
}

/** Settles what a crash left in doubt, confirms, and executes the pending writes. */
async function execute(deps: RevertDeps, o: RevertOptions, runId: string): Promise<void> {
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
  await executeActions(ctx, creates + deletes);
}

async function finish(
  deps: RevertDeps,
  o: RevertOptions,
  runId: string,
  startedMs: number,
): Promise<RevertResult> {
  const db = deps.handle.db;
  const figures = await readRunFigures(db, runId);
  const tally = tallyOf("revert", deps.signal?.aborted === true, figures);
  const exitCode = exitCodeFor(tally);
  const status = closingStatus(tally);
  const summary = await writeRunReport(
    db,
    {
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
    },
    reportDir(runId, o.out),
    false,
  );
  await finishRun(db, runId, {
    status,
    exitCode,
    counts: { ...figures.findings, ...figures.outcomes },
    summary,
  });
  // Interrupted with work left, or limited: only `revert --resume` does the rest.
  const resumable =
    (tally.interrupted && tally.unsettledActions > 0) || (await countLimited(db, runId)) > 0;
  return {
    summary,
    exitCode,
    ...(resumable ? { resumeCommand: revertResumeCommand(o.ofRunId, runId) } : {}),
  };
}
