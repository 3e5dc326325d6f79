/**
 * How the executor settles one action's outcome: verify a write whose outcome is unknown by looking
 * at the identity's controls, record a failure, and put back a write a cancel stopped before it
 * was sent.
 */
import { updateAction } from "../../db/journal/journal-queries.ts";
import type { Action } from "../../db/schema.ts";
import { type IdentityControl, PlatformError } from "../../platform/index.ts";
import { isExpectedClientControl } from "./adoptable.ts";
import type { ExecutorContext } from "./executor-context.ts";

export type Verdict = "present" | "absent" | "not_found" | "unknown";

/**
 * Looks at the identity's controls to settle an action whose outcome is unknown. A create is
 * settled by the control the mapping expects, an active CLIENT SELL_ONLY that is overridable
 * (adopted: never a second one; this tool creates only overridable ones, so a non-overridable one
 * is not its write, and the diff rules report it); a delete by its control being gone.
 */
export async function verify(ctx: ExecutorContext, a: Action): Promise<Verdict> {
  try {
    const controls = await ctx.client.listIdentityControls(a.identity_id, { signal: ctx.signal });
    if (a.action === "create") {
      const hit = controls.find((c) => isExpectedClientControl(c, a.control_type));
      if (!hit) return (await notOurs(ctx, a, controls)) ? "present" : "absent";
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

/**
 * A CLIENT control of the create's type that is not the one the mapping expects (not
 * overridable): not this tool's write, and a second one would be a duplicate. The create is not
 * sent; the diff rules report the control (`attribute_mismatch`). True when so settled.
 */
async function notOurs(
  ctx: ExecutorContext,
  a: Action,
  controls: readonly IdentityControl[],
): Promise<boolean> {
  const other = controls.find(
    (c) => c.type === a.control_type && c.setBy === "client" && !c.deletedAt,
  );
  if (!other) return false;
  await updateAction(ctx.db, a.id, {
    status: "skipped",
    outcome: "no_longer_missing",
    error: `a non-overridable CLIENT ${a.control_type} (${other.id}) was found: not adopted, not duplicated (attribute_mismatch)`,
  });
  return true;
}

/** Records an action as failed with its outcome and the error, secret-free. */
export async function fail(
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
export async function unsentOnCancel(ctx: ExecutorContext, a: Action, err: PlatformError) {
  if (err.kind !== "cancelled" || err.classification === "ambiguous") return false;
  await updateAction(ctx.db, a.id, { status: "pending", error: null });
  // Interrupted: stop quietly, a resume sends it. Anything else that cancelled the request before
  // it was sent (a wait beyond --max-wait-s) stops the run.
  if (ctx.signal?.aborted) return true;
  throw err;
}
