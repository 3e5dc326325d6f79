/**
 * Executes a run's journal: each action is journaled in_flight (committed) before its request and
 * gets its outcome after. Writes pass the run's write gate (pause, throttle file, daily window,
 * set-rate: `run-control.ts`); outcomes in doubt are settled by looking (`action-outcome.ts`).
 */
import pMap from "p-map";
import { DatabaseLostError } from "../../db/connection/reconnect.ts";
import { WriterLockTakenError } from "../../db/connection/run-lock.ts";
import {
  actionsPage,
  countPendingByAction,
  markInFlight,
  skipPending,
  updateAction,
} from "../../db/journal/journal-queries.ts";
import { getRun } from "../../db/journal/run-queries.ts";
import type { Action } from "../../db/schema.ts";
import { PlatformError } from "../../platform/index.ts";
import { CLIENT_CREATABLE_TYPES } from "../classify/mapping.ts";
import { LocalChannel } from "../steer/local-channel.ts";
import { type ActionControl, RunControl } from "../steer/run-control.ts";
import { fail, unsentOnCancel, verify } from "./action-outcome.ts";
import { stillToCreate, withAwaitedCreates, withdrawnForPlatform } from "./awaited-create.ts";
import { answerMismatch, settleUnexpectedAnswer } from "./create-answer.ts";
import { runDelete } from "./delete-action.ts";
import type { ExecutorContext } from "./executor-context.ts";
import { reverifyPending } from "./reverify.ts";

export type { ExecutorContext, ExecutorOptions } from "./executor-context.ts";

export interface ExecutionCounts {
  started: number;
}

/** Create → verify → create cycles before an action is left for a later resume to settle. */
const MAX_CYCLES = 3;
const PAGE = 500;

async function runCreate(ctx: ExecutorContext, a: Action): Promise<void> {
  if (!CLIENT_CREATABLE_TYPES.has(a.control_type) || a.control_type === "FROZEN") {
    await fail(ctx, a, "refused_locally", `clients may not create ${a.control_type} controls`);
    return;
  }
  if (!(await stillToCreate(ctx, a))) return;
  for (let cycle = 1; cycle <= MAX_CYCLES; cycle++) {
    await markInFlight(ctx.db, a.id);
    try {
      const created = await ctx.client.createIdentityControl({
        identityId: a.identity_id,
        type: a.control_type,
        reasonCode: ctx.options.run.reasonCode,
        reason: ctx.options.run.reason,
        signal: ctx.signal,
      });
      const why = answerMismatch(a, created);
      if (why !== null) return settleUnexpectedAnswer(ctx, a, created, why);
      await updateAction(ctx.db, a.id, {
        status: "succeeded",
        outcome: "created",
        result_control_id: created.id,
        http_status: created.httpStatus,
        error: null,
      });
      return await withdrawnForPlatform(ctx, a, created.id);
    } catch (err) {
      if (!(err instanceof PlatformError)) throw err;
      if (await unsentOnCancel(ctx, a, err)) return;
      const unknownOutcome = err.classification === "ambiguous" || err.kind === "cancelled";
      if (unknownOutcome) {
        await updateAction(ctx.db, a.id, {
          status: "ambiguous",
          http_status: err.status ?? null,
          error: err.message,
        });
        if (err.kind === "cancelled" || ctx.signal?.aborted) return; // a resume verifies it
      } else if (err.kind !== "conflict") {
        await fail(ctx, a, err.kind === "not_found" ? "identity_not_found" : err.kind, err);
        return;
      }
      // Ambiguous, or 409 (the platform already holds one): look before acting again.
      const verdict = await verify(ctx, a);
      if (verdict === "present") return;
      if (verdict === "not_found") return fail(ctx, a, "identity_not_found", err);
      if (verdict === "unknown") return; // stays ambiguous; a resume settles it
      if (err.kind === "conflict") return fail(ctx, a, "conflict", err);
    }
  }
  await fail(
    ctx,
    a,
    "gave_up",
    `no confirmed outcome after ${MAX_CYCLES} create attempts, each verified absent`,
  );
}

/**
 * Settles actions left in_flight or ambiguous by an earlier (crashed, cancelled) attempt: each is
 * verified against the platform and either adopted as done or put back to pending. Never re-sends
 * a write whose outcome is unknown without looking first.
 */
export async function resolveInDoubt(ctx: ExecutorContext, runId = ctx.runId): Promise<number> {
  return withResumeHint(ctx, runId, () => settleInDoubt(ctx, runId));
}

async function settleInDoubt(ctx: ExecutorContext, runId: string): Promise<number> {
  let after = 0;
  let settled = 0;
  for (;;) {
    const page = await actionsPage(ctx.db, runId, ["in_flight", "ambiguous"], after, PAGE);
    if (page.length === 0) break;
    after = page[page.length - 1]?.id ?? after;
    await Promise.all(
      page.map(async (a) => {
        const verdict = await verify(ctx, a);
        if (verdict === "absent" && a.action === "create") {
          await updateAction(ctx.db, a.id, { status: "pending", error: null });
        } else if (verdict === "present" && a.action === "delete") {
          await updateAction(ctx.db, a.id, { status: "pending", error: null });
        } else if (verdict === "not_found") {
          await fail(ctx, a, "identity_not_found", "the platform no longer knows this identity");
        }
        settled += 1;
      }),
    );
  }
  return settled;
}

/**
 * Executes the run's pending actions with bounded concurrency. Pending actions decided before this
 * process started are re-read first (see `reverify.ts`), so a control someone added meanwhile is
 * adopted, never duplicated. Each action is journaled in_flight (committed) before its request and
 * gets its outcome after, so a crash at any point leaves a journal that `resolveInDoubt` can settle
 * without a duplicate. `total` sizes the progress bar; it is recounted after the re-read.
 *
 * @example
 *   await executeActions(ctx, pendingCount);
 */
export async function executeActions(
  ctx: ExecutorContext,
  total: number,
): Promise<ExecutionCounts> {
  return withResumeHint(ctx, ctx.runId, async () => {
    const control = await startControl(ctx);
    try {
      const reread = await reverifyPending(ctx);
      let left = total;
      if (reread.reread > 0) {
        const { creates, deletes } = await countPendingByAction(ctx.db, ctx.runId);
        left = creates + deletes;
      }
      return await runPending(await withAwaitedCreates(ctx), control, left);
    } finally {
      await control.stop();
    }
  });
}

/** The run's steering, polled while it writes (on PGlite with the local channel). */
function startControl(ctx: ExecutorContext): Promise<RunControl> {
  return RunControl.start({
    db: ctx.db,
    runId: ctx.runId,
    client: ctx.client,
    logger: ctx.logger,
    rate: ctx.options.platform.rate,
    concurrency: ctx.options.platform.concurrency,
    hold: ctx.options.run,
    ...(ctx.localChannelDir ? { channel: new LocalChannel(ctx.localChannelDir) } : {}),
  });
}

/** The run's pending actions, page by page, while the run goes on and below `--limit`. */
async function* pendingActions(
  ctx: ExecutorContext,
  state: { started: number; failure?: unknown },
  cap: number,
): AsyncGenerator<Action> {
  let after = 0;
  for (;;) {
    const page = await actionsPage(ctx.db, ctx.runId, ["pending"], after, PAGE);
    if (page.length === 0) return;
    after = page[page.length - 1]?.id ?? after;
    for (const a of page) {
      if (ctx.signal?.aborted || state.failure !== undefined || state.started >= cap) return;
      state.started += 1;
      yield a;
    }
  }
}

async function runPending(
  ctx: ExecutorContext,
  control: ActionControl,
  total: number,
): Promise<ExecutionCounts> {
  const cap = ctx.options.run.limit ?? Number.POSITIVE_INFINITY;
  const state: { started: number; failure?: unknown } = { started: 0 };
  ctx.progress.start(ctx.undo ? "revert" : "apply", Math.min(total, cap), {
    // The budget status shows, read at each refresh: a set-rate or a 429's halving at once.
    rateCap: () => control.budget(),
  });
  try {
    // p-map pulls the next action only when a place is free, so memory stays flat and a cancel
    // stops quickly. A failure (lost database, lost lock, a refusal) starts nothing new, and the
    // actions already running finish journaling before it goes up.
    await pMap(
      pendingActions(ctx, state, cap),
      async (a) => {
        if (ctx.signal?.aborted || state.failure !== undefined) return;
        try {
          const ran = await control.gate.admit(async () => {
            control.noteWritesStarted();
            await (a.action === "create" ? runCreate(ctx, a) : runDelete(ctx, a));
            return true;
          }, ctx.signal);
          if (!ran) return;
          control.noteDone();
          ctx.progress.tick();
        } catch (err) {
          state.failure ??= err;
        }
      },
      { concurrency: Math.max(1, ctx.options.platform.concurrency) },
    );
    if (state.failure !== undefined) throw state.failure;
  } finally {
    ctx.progress.stop();
  }
  if (state.started >= cap && !ctx.signal?.aborted) {
    const skipped = await skipPending(ctx.db, ctx.runId, "not_run_limit");
    if (skipped > 0)
      ctx.logger.info(
        ctx.undo
          ? `--limit ${ctx.options.run.limit}: ${skipped} further undos skipped; revert --resume ${ctx.runId} picks them up`
          : `--limit ${ctx.options.run.limit}: ${skipped} further actions skipped; a later apply picks them up`,
      );
  }
  return { started: state.started };
}

/**
 * Runs `work` for `runId`; a lost database or a lost writer lock is reported with the exact
 * command that continues the run (the run's mode is read while the database is still there).
 */
async function withResumeHint<T>(
  ctx: ExecutorContext,
  runId: string,
  work: () => Promise<T>,
): Promise<T> {
  const mode = (await getRun(ctx.db, runId))?.mode ?? "apply";
  const resume = `controls-migrate ${mode} --resume ${runId}`;
  try {
    return await work();
  } catch (err) {
    if (err instanceof DatabaseLostError) {
      throw err.withHint(
        `Nothing more was sent to the platform. Once the database is back the run shows as interrupted; resume with: ${resume}`,
      );
    }
    if (err instanceof WriterLockTakenError) {
      throw err.withHint(`When the other run has finished, resume this one with: ${resume}`);
    }
    throw err;
  }
}
