/**
 * A run's life in the `runs` table: settling what a crashed writer left, resuming, claiming a new
 * run, the heartbeat, and closing a run (failed, interrupted, completed). The pipeline calls these
 * in order; none of them reads the source or lists the platform.
 */
import { countNotFinal, skipPending } from "../../db/journal/journal-queries.ts";
import {
  claimRun,
  finishRun,
  getRun,
  insertRun,
  markRunsInterrupted,
  markStaleRunsInterrupted,
  newRunId,
  saveRunSource,
  touchRun,
  unfinishedWriterRuns,
} from "../../db/journal/run-queries.ts";
import type { Run, RunStatus } from "../../db/schema.ts";
import { ExitCode, Interrupted, UserError } from "../../errors.ts";
import { TOOL_VERSION } from "../../version.ts";
import { resolveInDoubt } from "../execute/executor.ts";
import type { SourceCounts } from "../read/source-stage.ts";
import {
  executorContext,
  type PipelineDeps,
  type PipelineOptions,
  recordedOptions,
} from "./pipeline-context.ts";
import { bindingDifferences, type RunBinding } from "./run-binding.ts";
import { recordSettingChanges } from "./run-settings.ts";
import { readRunFigures } from "./run-summary.ts";
import { recordRunWorld, refuseResumeElsewhere } from "./run-world.ts";

/** The outcome of the pending actions of a writer whose read never finished (none was sent). */
export const READ_NOT_FINISHED = "read_not_finished";

/** How often a running run marks itself alive; `runs` calls a run stale after a minute without. */
export const HEARTBEAT_MS = 10_000;

/** A run the pipeline works on, with what it read if the read is already done (a resume). */
export interface ClaimedRun {
  readonly id: string;
  /** Null until the run's read is done (a new run); a resume reports the run's own counts. */
  readonly source: SourceCounts | null;
  readonly strategy: string | null;
}

/**
 * Writers first settle what a crashed writer left behind. apply refuses to start past an unfinished
 * run (it names the resume command); reconcile settles such runs itself: in-doubt actions are
 * verified on the platform, the rest superseded.
 */
export async function settleUnfinishedWriters(
  deps: PipelineDeps,
  options: PipelineOptions,
): Promise<void> {
  const db = deps.handle.db;
  const resumeId = options.run.resume;
  const unfinished: Run[] = [];
  for (const r of await unfinishedWriterRuns(db)) {
    if (r.id === resumeId) continue;
    if (r.source_rows_read !== null) unfinished.push(r);
    // Its read never finished: findings (and pending actions) are journaled while the listing
    // runs, but nothing is sent before the read is recorded, so nothing is left to resume.
    else await skipPending(db, r.id, READ_NOT_FINISHED);
  }
  await markStaleRunsInterrupted(db, resumeId);
  if (unfinished.length > 0 && options.mode === "apply") {
    const r = unfinished[unfinished.length - 1]!;
    const left = await countNotFinal(db, r.id);
    throw new UserError(
      `Run ${r.id} (${r.mode}, started ${r.started_at.toISOString()}) did not finish: ${left} actions are not final. Resume it first with: ${resumeCommand(r.mode, r.id, deps.resumeFlags)}`,
    );
  }
  for (const r of unfinished) {
    deps.logger.warn(
      `Settling unfinished run ${r.id} left by a crashed process before reconciling`,
    );
    await resolveInDoubt(executorContext(deps, options, r.id), r.id);
    await skipPending(db, r.id, "superseded");
    await markRunsInterrupted(db, [r.id]);
  }
}

/** The command that continues a run. */
export const resumeCommand = (mode: string, runId: string, flags = "") =>
  `controls-migrate ${mode} --resume ${runId}${flags}`;

/** The run `--resume ID` names, checked to be resumable by this command. */
async function resumableRun(deps: PipelineDeps, options: PipelineOptions, id: string) {
  const db = deps.handle.db;
  const run = await getRun(db, id);
  if (!run) {
    throw new UserError(`--resume ${id}: no such run. List runs with: controls-migrate runs`);
  }
  if (run.mode !== options.mode) {
    throw new UserError(
      `--resume ${run.id}: that is a ${run.mode} run; resume it with: ${resumeCommand(run.mode, run.id)}`,
    );
  }
  if (["completed", "declined", "discarded"].includes(run.status)) {
    throw new UserError(`--resume ${run.id}: the run is ${run.status}; nothing to resume.`);
  }
  // Nothing is sent before the read is recorded; the pending actions journaled meanwhile are moot.
  if (run.source_rows_read === null) {
    throw new UserError(
      `--resume ${run.id}: the run stopped before its read was done, so it wrote nothing; start a new one: controls-migrate ${options.mode}`,
    );
  }
  return run;
}

/** The counts a run recorded once its read was done; null if it never got that far. */
function recordedSource(run: Run): SourceCounts | null {
  if (run.source_rows_read === null) return null;
  return {
    rowsRead: run.source_rows_read,
    candidates: run.source_candidates ?? 0,
    anomalies: run.source_anomalies ?? 0,
  };
}

/** A resume pointed at another platform or source is refused before anything is read or sent. */
function refuseOtherBinding(deps: PipelineDeps, options: PipelineOptions, run: Run): void {
  const recorded = typeof run.options === "string" ? JSON.parse(run.options) : run.options;
  const now = recordedOptions(deps, options);
  const differences = bindingDifferences(recorded ?? {}, {
    ...(now as unknown as RunBinding),
    source: options.source,
  });
  if (differences.length === 0) return;
  throw new UserError(
    `--resume ${run.id}: the run is bound to the platform and source it started with, and this invocation points elsewhere: ${differences.join("; ")}. Nothing was read or sent; the run stays resumable with its own settings.`,
  );
}

/** `--resume ID`: takes the unfinished run over (this process, running again). */
export async function claimResumedRun(
  deps: PipelineDeps,
  options: PipelineOptions,
  id: string,
): Promise<ClaimedRun> {
  const run = await resumableRun(deps, options, id);
  refuseOtherBinding(deps, options, run);
  await refuseResumeElsewhere(deps, options, run.id);
  await claimRun(deps.handle.db, run.id);
  await recordSettingChanges(deps, run.id, deps.settingChanges ?? []);
  deps.onRunStarted?.(run.id);
  deps.logger.info(`Resuming run ${run.id}`);
  return { id: run.id, source: recordedSource(run), strategy: run.strategy };
}

/**
 * Settles the actions a resumed run left in doubt by looking at the platform, so that none is
 * sent twice: a write found done is adopted, one found absent goes back to pending.
 */
export async function settleResumedRun(
  deps: PipelineDeps,
  options: PipelineOptions,
  runId: string,
): Promise<void> {
  const settled = await resolveInDoubt(executorContext(deps, options, runId));
  if (settled > 0) deps.logger.info(`Verified ${settled} actions whose outcome was unknown`);
}

/** Records a new run, `running`, owned by this process. */
export async function claimNewRun(deps: PipelineDeps, options: PipelineOptions): Promise<string> {
  const id = newRunId();
  await insertRun(deps.handle.db, {
    id,
    mode: options.mode,
    parentRunId: options.run.plan ?? null,
    options: recordedOptions(deps, options),
    toolVersion: TOOL_VERSION,
  });
  await recordRunWorld(deps, options, id);
  deps.onRunStarted?.(id); // before the line, so that a JSON log's first line of it has run_id
  deps.logger.info(`Run ${id} (${options.mode}) started`);
  return id;
}

/** Records what the run read, for a later resume to report. */
export async function recordRead(
  deps: PipelineDeps,
  runId: string,
  source: SourceCounts,
  strategy: string,
): Promise<void> {
  await saveRunSource(deps.handle.db, runId, {
    source_rows_read: source.rowsRead,
    source_candidates: source.candidates,
    source_anomalies: source.anomalies,
    strategy,
  });
}

/**
 * Marks the run alive every `HEARTBEAT_MS` (shown by `runs`, and when another writer finds the lock
 * held). Returns the function that stops it.
 */
export function startHeartbeat(deps: PipelineDeps, runId: string): () => void {
  const timer = setInterval(
    () => void touchRun(deps.handle.db, runId).catch(() => {}),
    HEARTBEAT_MS,
  );
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Runs `work` with the heartbeat on. If it throws, the run is closed (failed, or interrupted when
 * cancelled) with the error, and the error is rethrown; a cancellation becomes an `Interrupted`
 * that says whether the run can be resumed.
 */
export async function whileAlive<T>(
  deps: PipelineDeps,
  options: PipelineOptions,
  runId: string,
  work: () => Promise<T>,
): Promise<T> {
  const stop = startHeartbeat(deps, runId);
  try {
    return await work();
  } catch (err) {
    const aborted = deps.signal?.aborted === true;
    await failRun(deps, runId, aborted ? "interrupted" : "failed", err);
    if (aborted && !(err instanceof Interrupted)) throw await interruption(deps, options, runId);
    throw err;
  } finally {
    stop();
  }
}

/** What to tell after a cancel: how to resume, or that nothing is left to. */
async function interruption(
  deps: PipelineDeps,
  options: PipelineOptions,
  runId: string,
): Promise<Interrupted> {
  const left = await countNotFinal(deps.handle.db, runId).catch(() => 0);
  if (left === 0) {
    return new Interrupted(`Interrupted: run ${runId} is closed; nothing is left to resume.`);
  }
  return new Interrupted(
    `Interrupted: run ${runId} has ${left} actions not done; everything sent is journaled.`,
    resumeCommand(options.mode, runId, deps.resumeFlags),
  );
}

/**
 * Closes a run that did not complete, with the error; a run already closed (declined, say) keeps
 * its status. Never throws: the original error matters more.
 */
export async function failRun(
  deps: PipelineDeps,
  runId: string,
  status: Extract<RunStatus, "failed" | "interrupted">,
  err?: unknown,
): Promise<void> {
  const db = deps.handle.db;
  try {
    const run = await getRun(db, runId);
    if (run && run.status !== "running") return;
    const code = status === "interrupted" ? ExitCode.interrupted : ExitCode.failed;
    const error = err === undefined ? null : err instanceof Error ? err.message : String(err);
    // What it did so far, from the journal: `runs` shows a failed run's true counts, not "-".
    const figures = await readRunFigures(db, runId).catch(() => undefined);
    const counts = figures ? { ...figures.findings, ...figures.outcomes } : undefined;
    await finishRun(db, runId, { status, exitCode: code, error, ...(counts ? { counts } : {}) });
  } catch {
    // The database may be what failed; the next writer marks a run left running as interrupted.
  }
}

/**
 * The writes were not confirmed (an answer other than yes, or Ctrl-C at the prompt): nothing was
 * sent, so the run is closed as declined and its pending actions skipped. The next apply starts
 * cleanly.
 */
export async function closeDeclined(deps: PipelineDeps, runId: string): Promise<void> {
  const db = deps.handle.db;
  const interrupted = deps.signal?.aborted === true;
  await skipPending(db, runId, "declined");
  await finishRun(db, runId, {
    status: "declined",
    exitCode: interrupted ? ExitCode.interrupted : ExitCode.failed,
    error: interrupted ? "interrupted at the confirmation" : "not confirmed",
  });
}
