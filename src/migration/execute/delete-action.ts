/**
 * The executor's delete: re-read right before it (the identity by id, on the identities path), one
 * identity at a time, never the last SELL_ONLY of an identity whose flags ask for a restriction
 * (see `restriction.ts`).
 */
import { markInFlight, updateAction } from "../../db/journal/journal-queries.ts";
import type { Action } from "../../db/schema.ts";
import { type IdentityControl, PlatformError } from "../../platform/index.ts";
import { findingFlags } from "../classify/findings.ts";
import { KEPT_RESTRICTED, keptReason, mayDeleteSellOnly } from "../classify/restriction.ts";
import { fail, unsentOnCancel, verify } from "./action-outcome.ts";
import type { ExecutorContext } from "./executor-context.ts";

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

/**
 * Deletes one control after re-reading it (see `guardedDelete`); deletes of one identity are
 * serialised.
 */
export function runDelete(ctx: ExecutorContext, a: Action): Promise<void> {
  return oneDeleteAtATime(a.identity_id, () => guardedDelete(ctx, a));
}

/**
 * The identity's active controls, read by id on the identities path: the platform budgets each
 * path on its own, so the re-read before a delete leaves the controls path to the deletes (read
 * there too, every delete took two of its requests, and a revert half its rate). An identity that
 * path does not find is read on the controls path, as before, whose answer decides.
 */
async function activeControls(
  ctx: ExecutorContext,
  identityId: string,
): Promise<IdentityControl[]> {
  try {
    return (await ctx.client.getIdentity(identityId, { signal: ctx.signal })).activeControls;
  } catch (err) {
    if (!(err instanceof PlatformError && err.kind === "not_found")) throw err;
    return ctx.client.listIdentityControls(identityId, { signal: ctx.signal });
  }
}

async function guardedDelete(ctx: ExecutorContext, a: Action): Promise<void> {
  // Re-check right before deleting: only an active, overridable, client-set SELL_ONLY may go, and
  // never the last SELL_ONLY of an identity whose source flags ask for a restriction.
  let controls: IdentityControl[];
  try {
    controls = await activeControls(ctx, a.identity_id);
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
  const flags = ctx.undo ? null : await findingFlags(ctx.db, a.run_id, a.finding_id);
  const active = controls.filter((c) => c.type === "SELL_ONLY" && !c.deletedAt).map((c) => c.id);
  if (!ctx.undo && !mayDeleteSellOnly(flags, active, target.id)) {
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
