import type { Kysely } from "kysely";
import pLimit from "p-limit";
import type { PipelineConfig, PlatformConfig } from "../config.ts";
import {
  actionsPage,
  countPendingByAction,
  markInFlight,
  skipPending,
  updateAction,
} from "../db/journal-queries.ts";
import { DatabaseLostError } from "../db/reconnect.ts";
import { WriterLockTakenError } from "../db/run-lock.ts";
import { getRun } from "../db/run-queries.ts";
import type { Action, Database } from "../db/schema.ts";
import type { Logger } from "../log.ts";
import { type IdentityControl, type PlatformClient, PlatformError } from "../platform/index.ts";
import { findingFlags } from "./findings.ts";
import { CLIENT_CREATABLE_TYPES } from "./mapping.ts";
import type { Progress } from "./progress.ts";
import { KEPT_RESTRICTED, keptReason, mayDeleteSellOnly } from "./restriction.ts";
import { reverifyPending } from "./reverify.ts";

/** The part of the pipeline's options the executor reads; the pipeline passes its own object. */
export interface ExecutorOptions {
  /** reason_code and reason of the controls created; `limit`: at most this many actions (canary). */
  readonly run: Pick<PipelineConfig, "reasonCode" | "reason" | "limit">;
  readonly platform: Pick<PlatformConfig, "concurrency">;
}

export interface ExecutorContext {
  readonly db: Kysely<Database>;
  readonly client: PlatformClient;
  readonly runId: string;
  readonly logger: Logger;
  readonly progress: Progress;
  readonly signal?: AbortSignal;
  readonly options: ExecutorOptions;
}

export interface ExecutionCounts {
  started: number;
}

/** Create → verify → create cycles before an action is left for a later resume to settle. */
const MAX_CYCLES = 3;
const PAGE = 500;

type Verdict = "present" | "absent" | "not_found" | "unknown";

const isClientSellOnly = (c: IdentityControl) =>
  c.type === "SELL_ONLY" && c.setBy === "client" && !c.deletedAt;

/**
 * Looks at the identity's controls to settle an action whose outcome is unknown. A create is
 * settled by an active client SELL_ONLY (adopted: never a second one); a delete by its control being
 * gone.
 */
async function verify(ctx: ExecutorContext, a: Action): Promise<Verdict> {
  try {
    const controls = await ctx.client.listIdentityControls(a.identity_id, { signal: ctx.signal });
    if (a.action === "create") {
      const hit = controls
        .filter(isClientSellOnly)
        .sort((x, y) => Number(y.isOverridable) - Number(x.isOverridable))[0];
      if (!hit) return "absent";
      await updateAction(ctx.db, a.id, {
        status: "succeeded",
        outcome: "adopted",
        result_control_id: hit.id,
        error: null,
      });
      return "present";
    }
    const still = controls.find((c) => c.id === a.control_key && !c.deletedAt);
    if (still) return "present";
    await updateAction(ctx.db, a.id, {
      status: "succeeded",
      outcome: "already_deleted",
      error: null,
    });
    return "absent";
  } catch (err) {
    if (err instanceof PlatformError && err.kind === "not_found") return "not_found";
    if (err instanceof PlatformError && err.kind !== "cancelled") {
      ctx.logger.warn(`Could not verify ${a.action} for identity ${a.identity_id}: ${err.message}`);
      return "unknown";
    }
    throw err;
  }
}

async function fail(
  ctx: ExecutorContext,
  a: Action,
  outcome: string,
  err?: PlatformError | string,
): Promise<void> {
  const message = typeof err === "string" ? err : (err?.message ?? null);
  await updateAction(ctx.db, a.id, {
    status: "failed",
    outcome,
    http_status: typeof err === "object" ? (err.status ?? null) : null,
    error: message,
  });
}

/**
 * A cancel that stopped the request before it left (waiting for the rate budget or a token) sent
 * nothing: the action goes back to pending, not ambiguous, and a resume simply sends it. The
 * client says "cancelled" with a non-ambiguous classification exactly then.
 */
async function unsentOnCancel(ctx: ExecutorContext, a: Action, err: PlatformError) {
  if (err.kind !== "cancelled" || err.classification === "ambiguous") return false;
  await updateAction(ctx.db, a.id, { status: "pending", error: null });
  // Interrupted: stop quietly, a resume sends it. Anything else that cancelled the request before
  // it was sent (a wait beyond --max-wait-s) stops the run.
  if (ctx.signal?.aborted) return true;
  throw err;
}

async function runCreate(ctx: ExecutorContext, a: Action): Promise<void> {
  if (!CLIENT_CREATABLE_TYPES.has(a.control_type) || a.control_type === "FROZEN") {
    await fail(ctx, a, "refused_locally", `clients may not create ${a.control_type} controls`);
    return;
  }
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
      await updateAction(ctx.db, a.id, {
        status: "succeeded",
        outcome: "created",
        result_control_id: created.id,
        http_status: 200,
        error: null,
      });
      return;
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
 * Deletes of one identity run one after another, so that each re-read already sees the previous
 * delete: two concurrent guards could each count the other's target as the SELL_ONLY that stays.
 */
const deletesInProgress = new Map<string, Promise<void>>();

async function oneDeleteAtATime(identityId: string, run: () => Promise<void>): Promise<void> {
  const previous = deletesInProgress.get(identityId) ?? Promise.resolve();
  const mine = previous.then(run);
  const settled = mine.catch(() => {});
  deletesInProgress.set(identityId, settled);
  try {
    await mine;
  } finally {
    if (deletesInProgress.get(identityId) === settled) deletesInProgress.delete(identityId);
  }
}

function runDelete(ctx: ExecutorContext, a: Action): Promise<void> {
  return oneDeleteAtATime(a.identity_id, () => guardedDelete(ctx, a));
}

async function guardedDelete(ctx: ExecutorContext, a: Action): Promise<void> {
  // Re-check right before deleting: only an active, overridable, client-set SELL_ONLY may go, and
  // never the last SELL_ONLY of an identity whose source flags ask for a restriction.
  let controls: IdentityControl[];
  try {
    controls = await ctx.client.listIdentityControls(a.identity_id, { signal: ctx.signal });
  } catch (err) {
    if (err instanceof PlatformError && err.kind !== "cancelled")
      return fail(ctx, a, err.kind, err);
    throw err;
  }
  const target = controls.find((c) => c.id === a.control_key && !c.deletedAt);
  if (!target) {
    await updateAction(ctx.db, a.id, { status: "succeeded", outcome: "already_deleted" });
    return;
  }
  if (!(target.type === "SELL_ONLY" && target.setBy === "client" && target.isOverridable)) {
    await updateAction(ctx.db, a.id, {
      status: "skipped",
      outcome: "no_longer_prunable",
      error: `control is now ${target.type} set_by ${target.setByRaw} is_overridable ${target.isOverridable}`,
    });
    return;
  }
  const flags = await findingFlags(ctx.db, a.run_id, a.finding_id);
  const active = controls.filter((c) => c.type === "SELL_ONLY" && !c.deletedAt).map((c) => c.id);
  if (!mayDeleteSellOnly(flags, active, target.id)) {
    await updateAction(ctx.db, a.id, {
      status: "skipped",
      outcome: KEPT_RESTRICTED,
      error: keptReason(flags),
    });
    return;
  }
  await markInFlight(ctx.db, a.id);
  try {
    const r = await ctx.client.deleteIdentityControl(a.control_key, ctx.options.run.reason, {
      signal: ctx.signal,
    });
    await updateAction(ctx.db, a.id, {
      status: "succeeded",
      outcome: r.alreadyDeleted ? "already_deleted" : "deleted",
      http_status: 200,
      error: null,
    });
  } catch (err) {
    if (!(err instanceof PlatformError)) throw err;
    if (await unsentOnCancel(ctx, a, err)) return;
    if (err.classification === "ambiguous" || err.kind === "cancelled") {
      await updateAction(ctx.db, a.id, {
        status: "ambiguous",
        http_status: err.status ?? null,
        error: err.message,
      });
      if (err.kind !== "cancelled") await verify(ctx, a);
      return;
    }
    await fail(ctx, a, err.kind === "not_found" ? "already_deleted" : "refused", err);
  }
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
    const reread = await reverifyPending(ctx);
    let left = total;
    if (reread.reread > 0) {
      const { creates, deletes } = await countPendingByAction(ctx.db, ctx.runId);
      left = creates + deletes;
    }
    return runPending(ctx, left);
  });
}

async function runPending(ctx: ExecutorContext, total: number): Promise<ExecutionCounts> {
  const limit = pLimit(ctx.options.platform.concurrency);
  const running = new Set<Promise<void>>();
  let started = 0;
  let after = 0;
  const cap = ctx.options.run.limit ?? Number.POSITIVE_INFINITY;
  let stopping = false;
  ctx.progress.start("apply", Math.min(total, cap));
  try {
    outer: for (;;) {
      const page = await actionsPage(ctx.db, ctx.runId, ["pending"], after, PAGE);
      if (page.length === 0) break;
      after = page[page.length - 1]?.id ?? after;
      for (const a of page) {
        if (ctx.signal?.aborted || started >= cap) break outer;
        started += 1;
        const p = limit(async () => {
          if (ctx.signal?.aborted || stopping) return;
          await (a.action === "create" ? runCreate(ctx, a) : runDelete(ctx, a));
          ctx.progress.tick();
        });
        running.add(p);
        const done = () => running.delete(p);
        p.then(done, done);
        // Keep the queue short so a cancel stops quickly and memory stays flat.
        while (limit.pendingCount > ctx.options.platform.concurrency * 4)
          await Promise.race(running);
      }
    }
    await Promise.all(running);
  } catch (err) {
    // Stopping (lost database, lost lock, a refusal): queued actions start nothing, and the ones
    // already running finish journaling before the error goes up. (p-limit's clearQueue would
    // leave the queued promises unsettled forever.)
    stopping = true;
    await Promise.allSettled(running);
    throw err;
  } finally {
    ctx.progress.stop();
  }
  if (started >= cap && !ctx.signal?.aborted) {
    const skipped = await skipPending(ctx.db, ctx.runId, "not_run_limit");
    if (skipped > 0)
      ctx.logger.info(
        `--limit ${ctx.options.run.limit}: ${skipped} further actions skipped; a later apply picks them up`,
      );
  }
  return { started };
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
