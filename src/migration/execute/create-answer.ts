/**
 * A create's answer is checked, not trusted (issue 51 §4). The platform's answer must be the
 * contract's (HTTP 200) and name the control that was asked for: its type, set by the CLIENT,
 * overridable, active, with a control id, and the identity when the answer names one. An answer
 * that does not is an `unexpected_answer`: the identity's controls are read, and the action ends by
 * what the platform holds:
 *
 * - the control the mapping expects is there: `succeeded:adopted`;
 * - the answered control is there with another shape (a DORMANT, one not overridable, ...):
 *   `failed:unexpected_answer`, the control named (the next plan reports it as a finding);
 * - no such control (an answer for nothing): `ambiguous:unexpected_answer`, never `created`; a
 *   resume or the next reconcile verifies it again;
 * - the identity is gone: `failed:identity_not_found`; the read fails (or a cancel stops it):
 *   ambiguous as above.
 */
import { updateAction } from "../../db/journal/journal-queries.ts";
import type { Action } from "../../db/schema.ts";
import { type CreatedControl, type IdentityControl, PlatformError } from "../../platform/index.ts";
import { fail } from "./action-outcome.ts";
import { isExpectedClientControl } from "./adoptable.ts";
import type { ExecutorContext } from "./executor-context.ts";

export const UNEXPECTED_ANSWER = "unexpected_answer";

/**
 * What is wrong with a create's answer for action `a`; null when it is the control asked for.
 *
 * @example
 *   answerMismatch(action, { ...answer, type: "DORMANT" }) // "a DORMANT control, not SELL_ONLY"
 */
export function answerMismatch(a: Action, c: CreatedControl): string | null {
  const wrong: string[] = [];
  if (c.httpStatus !== 200) wrong.push(`HTTP ${c.httpStatus}, not the contract's 200`);
  if (c.identityId !== null && c.identityId !== a.identity_id) {
    wrong.push(`identity ${c.identityId}, not ${a.identity_id}`);
  }
  if (c.type !== a.control_type) wrong.push(`a ${c.type} control, not ${a.control_type}`);
  if (c.setBy !== "client") wrong.push(`set_by ${c.setByRaw || "(none)"}, not CLIENT`);
  if (!c.isOverridable) wrong.push("not overridable");
  if (c.id.trim() === "") wrong.push("no control id");
  if (c.deletedAt) wrong.push(`deleted at ${c.deletedAt}`);
  return wrong.length === 0 ? null : wrong.join(", ");
}

const shape = (c: IdentityControl) =>
  `a ${c.type} set by ${c.setByRaw || "(none)"}${c.isOverridable ? "" : ", not overridable"} (${c.id})`;

/** Settles a create whose answer was unexpected (`why`) by reading the identity's controls. */
export async function settleUnexpectedAnswer(
  ctx: ExecutorContext,
  a: Action,
  created: CreatedControl,
  why: string,
): Promise<void> {
  ctx.logger.warn(
    `The create for identity ${a.identity_id} was answered with ${why}: reading its controls before counting it`,
  );
  const said = `the platform answered ${why}`;
  let controls: IdentityControl[];
  try {
    controls = await ctx.client.listIdentityControls(a.identity_id, { signal: ctx.signal });
  } catch (err) {
    if (!(err instanceof PlatformError)) throw err;
    if (err.kind === "not_found")
      return fail(ctx, a, "identity_not_found", `${said}; ${err.message}`);
    // A cancelled read included: the create was sent, so it is in doubt, never back to pending.
    return inDoubt(ctx, a, created, `${said}, and the read to verify it failed (${err.message})`);
  }
  const hit = controls.find((c) => isExpectedClientControl(c, a.control_type));
  if (hit) {
    await updateAction(ctx.db, a.id, {
      status: "succeeded",
      outcome: "adopted",
      result_control_id: hit.id,
      http_status: created.httpStatus,
      error: `${said}; a read finds the expected control: adopted`,
    });
    return;
  }
  const made = controls.find((c) => c.id === created.id && !c.deletedAt);
  if (made) {
    await updateAction(ctx.db, a.id, {
      status: "failed",
      outcome: UNEXPECTED_ANSWER,
      result_control_id: made.id,
      http_status: created.httpStatus,
      error: `${said}; the platform holds ${shape(made)}, not the control asked for: not counted as created (the next plan reports it)`,
    });
    return;
  }
  await inDoubt(
    ctx,
    a,
    created,
    `${said}, and a read of the identity's controls finds no such control`,
  );
}

async function inDoubt(ctx: ExecutorContext, a: Action, c: CreatedControl, why: string) {
  await updateAction(ctx.db, a.id, {
    status: "ambiguous",
    outcome: UNEXPECTED_ANSWER,
    http_status: c.httpStatus,
    error: `${why}: not counted as created; a resume or the next reconcile verifies it`,
  });
}
