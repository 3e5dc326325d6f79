/**
 * What a re-read of a pending action concludes, from the identity's fresh controls: the same rules
 * as settling an ambiguous write, and, for a create, the diff rules themselves
 * (`classifyIdentity`) against the flags its finding recorded, so a create is sent only if the
 * fresh state still calls for it.
 */
import { updateAction } from "../db/journal-queries.ts";
import type { StaleAction } from "../db/reverify-queries.ts";
import type { IdentityControl, PlatformError } from "../platform/index.ts";
import { isExpectedClientControl } from "./adoptable.ts";
import { classifyIdentity, type ObservedControl } from "./classify.ts";
import type { ReverifyContext } from "./reverify-context.ts";

/** How the re-read actions ended, counted. */
export interface ReverifyTally {
  adopted: number;
  alreadyDeleted: number;
  noLongerMissing: number;
  notFound: number;
  readFailed: number;
}

/** The outcome of a pending create the fresh state no longer calls for (report it, send nothing). */
export const NO_LONGER_MISSING = "no_longer_missing";

export const newTally = (): ReverifyTally => ({
  adopted: 0,
  alreadyDeleted: 0,
  noLongerMissing: 0,
  notFound: 0,
  readFailed: 0,
});

const observed = (c: IdentityControl): ObservedControl => ({
  controlId: c.id,
  type: c.type,
  setBy: c.setBy,
  setByRaw: c.setByRaw,
  isOverridable: c.isOverridable,
});

/**
 * Settles `a` if the platform already did what it intends, or no longer needs it; false when it
 * is still to do.
 */
export async function settle(
  ctx: ReverifyContext,
  a: StaleAction,
  controls: readonly IdentityControl[],
  tally: ReverifyTally,
): Promise<boolean> {
  const active = controls.filter((c) => !c.deletedAt);
  if (a.action === "create") {
    // The same rule as settling an ambiguous create: only the control the mapping expects
    // (CLIENT, of the type, overridable). Any other is left to the diff rules below.
    const hit = active.find((c) => isExpectedClientControl(c, a.control_type));
    if (hit) {
      await updateAction(ctx.db, a.id, {
        status: "succeeded",
        outcome: "adopted",
        result_control_id: hit.id,
        error: null,
      });
      tally.adopted += 1;
      return true;
    }
    const instead = noLongerMissing(a, active);
    if (!instead) return false;
    await updateAction(ctx.db, a.id, {
      status: "skipped",
      outcome: NO_LONGER_MISSING,
      error: `re-read before sending: ${instead}`,
    });
    tally.noLongerMissing += 1;
    return true;
  }
  if (active.some((c) => c.id === a.control_key)) return false;
  await updateAction(ctx.db, a.id, {
    status: "succeeded",
    outcome: "already_deleted",
    error: null,
  });
  tally.alreadyDeleted += 1;
  return true;
}

/**
 * Why the diff rules no longer ask for this create on the fresh controls (say a SELL_ONLY of an
 * unknown owner appeared: a person decides), or null when they still do or the flags are unknown.
 */
function noLongerMissing(a: StaleAction, active: readonly IdentityControl[]): string | null {
  if (a.user_disabled === null || a.admin_disabled === null) return null;
  const findings = classifyIdentity({
    identityId: a.identity_id,
    source: { userDisabled: a.user_disabled, adminDisabled: a.admin_disabled },
    platform: "found",
    controls: active.map(observed),
  });
  if (findings.some((f) => f.create && f.expected?.type === a.control_type)) return null;
  const mine = findings.find((f) => f.expected?.setBy === "client");
  return mine
    ? `${mine.finding}: ${mine.detail}`
    : "the fresh state no longer calls for this control";
}

/** The identity is gone: its action fails, nothing is sent. */
export async function notFound(
  ctx: ReverifyContext,
  a: StaleAction,
  why: string,
  tally: ReverifyTally,
): Promise<void> {
  await updateAction(ctx.db, a.id, {
    status: "failed",
    outcome: "identity_not_found",
    error: `re-read before sending: ${why}`,
  });
  tally.notFound += 1;
}

/** The state could not be read: the action is not sent blind; a re-run retries it. */
export async function readFailed(
  ctx: ReverifyContext,
  a: StaleAction,
  err: PlatformError,
  tally: ReverifyTally,
): Promise<void> {
  await updateAction(ctx.db, a.id, {
    status: "failed",
    outcome: "read_failed",
    http_status: err.status ?? null,
    error: `not sent: its state could not be re-read (${err.message})`,
  });
  tally.readFailed += 1;
}
