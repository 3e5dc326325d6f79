/**
 * A create for an identity whose wait for the platform's own migration expired
 * (`--wait-for-platform-s`) races that migration: the platform may have created the control since
 * the run read it. Right before such a create is sent, the identity's controls are read again; it
 * is sent only if neither the platform's migration nor anyone else created the control meanwhile
 * (found: adopted, or reported; the identity gone: failed; the read failed: not sent blind).
 */
import { awaitedCreateIds } from "../../db/journal/three-way-queries.ts";
import type { Action } from "../../db/schema.ts";
import { fail, verify } from "./action-outcome.ts";
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
