/**
 * A create for an identity whose wait for the platform's own migration expired
 * (`--wait-for-platform-s`) races that migration: the platform may have created the control since
 * the run read it. Right before such a create is sent, the identity's controls are read again; it
 * is sent only if neither the platform's migration nor anyone else created the control meanwhile
 * (found: adopted, or reported; the identity gone: failed; the read failed: not sent blind).
 * That read cannot end the race: the platform's migration may make its control between the read
 * and the create's arrival (while the create waits for the rate budget, for one). So the
 * identity's controls are read once more after the create's answer: another CLIENT SELL_ONLY
 * beside the tool's own means the platform got there too, and the tool deletes its own at once,
 * leaving the platform's (`withdrawnForPlatform`).
 */

import { updateAction } from "../../db/journal/journal-queries.ts";
import { awaitedCreateIds } from "../../db/journal/three-way-queries.ts";
import type { Action } from "../../db/schema.ts";
import { PlatformError } from "../../platform/index.ts";
import { fail, verify } from "./action-outcome.ts";
import { isExpectedClientControl } from "./adoptable.ts";
import type { ExecutorContext } from "./executor-context.ts";

/** The context with the run's awaited creates (none looked up for a revert). */
export async function withAwaitedCreates(ctx: ExecutorContext): Promise<ExecutorContext> {
  if (ctx.undo || ctx.waitForPlatform?.kind !== "wait-s") return ctx;
  return { ...ctx, awaitedCreates: await awaitedCreateIds(ctx.db, ctx.runId) };
}

/** True when the create is still to send; otherwise its action is settled and recorded. */
export async function stillToCreate(ctx: ExecutorContext, a: Action): Promise<boolean> {
  if (!ctx.awaitedCreates?.has(a.id)) return true;
  const verdict = await verify(ctx, a);
  if (verdict === "absent") return true;
  if (verdict === "not_found") await fail(ctx, a, "identity_not_found", "read before the create");
  if (verdict === "unknown") {
    await fail(
      ctx,
      a,
      "read_failed",
      "the identity's controls could not be read right before the create (its wait for the platform's migration had expired): not sent blind",
    );
  }
  return false;
}

/**
 * After an awaited create was answered with the tool's control `ownId`: reads the identity's
 * controls again; if another active CLIENT control of the create's type is there (the platform's
 * migration made it while the create was on its way, or right after), deletes the tool's own and
 * records the action by the other (adopted when the mapping expects it, else
 * `no_longer_missing`). A read or delete that fails leaves the action `created` and the
 * duplicate for `reconcile --prune`, which deletes the tool's own first; a warning says so.
 */
export async function withdrawnForPlatform(
  ctx: ExecutorContext,
  a: Action,
  ownId: string,
): Promise<void> {
  if (!ctx.awaitedCreates?.has(a.id)) return;
  try {
    const controls = await ctx.client.listIdentityControls(a.identity_id, { signal: ctx.signal });
    const other = controls.find(
      (c) => c.id !== ownId && c.type === a.control_type && c.setBy === "client" && !c.deletedAt,
    );
    if (!other) return;
    await ctx.client.deleteIdentityControl(ownId, ctx.options.run.reason, { signal: ctx.signal });
    const adopted = isExpectedClientControl(other, a.control_type);
    await updateAction(ctx.db, a.id, {
      status: adopted ? "succeeded" : "skipped",
      outcome: adopted ? "adopted" : "no_longer_missing",
      result_control_id: adopted ? other.id : null,
      error: `created ${ownId}, then found another CLIENT ${a.control_type} (${other.id}), the platform's migration's or someone else's: the tool's own deleted${adopted ? ", the other adopted" : " (attribute_mismatch)"}`,
    });
  } catch (err) {
    if (!(err instanceof PlatformError)) throw err;
    ctx.logger.warn(
      `Identity ${a.identity_id}: could not check for the platform's own control after creating ${ownId} (${err.message}); a duplicate, if any, is left to reconcile --prune`,
    );
  }
}
