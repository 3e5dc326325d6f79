/**
 * What a re-read of a pending action concludes, from the identity's fresh controls: the same rules
 * as settling an ambiguous write, and, for a create, the diff rules themselves
 * (`classifyIdentity`) against the flags its finding recorded, so a create is sent only if the
 * fresh state still calls for it. With the platform's fresh legacy fields (issue 27), a create
 * whose identity the platform's own migration will now serve is `skipped:awaiting_platform_migration`
 * (the wait policy decides, as in the plan's findings).
 */
import { updateAction } from "../../db/journal/journal-queries.ts";
import type { StaleAction } from "../../db/journal/reverify-queries.ts";
import type { IdentityControl, PlatformError } from "../../platform/index.ts";
import { classifyIdentity, type ObservedControl } from "../classify/classify.ts";
import type { PlatformLegacy } from "../classify/three-way.ts";
import { isExpectedClientControl } from "./adoptable.ts";
import { dueForCreate } from "./platform-wait.ts";
import type { ReverifyContext } from "./reverify-context.ts";

/** How the re-read actions ended, counted. */
export interface ReverifyTally {
  adopted: number;
  alreadyDeleted: number;
  noLongerMissing: number;
  notFound: number;
  readFailed: number;
  awaitingPlatform: number;
}

/** The outcome of a pending create the fresh state no longer calls for (report it, send nothing). */
export const NO_LONGER_MISSING = "no_longer_missing";
/** The outcome of a pending create the platform's own migration will now make (not sent). */
export const AWAITING_PLATFORM = "awaiting_platform_migration";

export const newTally = (): ReverifyTally => ({
  adopted: 0,
  alreadyDeleted: 0,
  noLongerMissing: 0,
  notFound: 0,
  readFailed: 0,
  awaitingPlatform: 0,
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
 * is still to do. `legacy`: the identity's fresh legacy fields (absent: not read, two-way rules).
 */
export async function settle(
  ctx: ReverifyContext,
  a: StaleAction,
  controls: readonly IdentityControl[],
  tally: ReverifyTally,
  legacy?: PlatformLegacy | null,
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
    if (await awaitingPlatform(ctx, a, active, legacy ?? null)) {
      await updateAction(ctx.db, a.id, {
        status: "skipped",
        outcome: AWAITING_PLATFORM,
        error: `re-read before sending: the platform's legacy user_disabled is now true; its own migration will create this control`,
      });
      tally.awaitingPlatform += 1;
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

/**
 * Whether the fresh legacy fields make this create `awaiting_platform_migration` and the wait
 * policy says not yet (under `--wait-for-platform-s` the sighting is recorded as in the plan).
 */
async function awaitingPlatform(
  ctx: ReverifyContext,
  a: StaleAction,
  active: readonly IdentityControl[],
  legacy: PlatformLegacy | null,
): Promise<boolean> {
  const policy = ctx.waitForPlatform;
  if (!policy || policy.kind === "no-wait" || legacy === null) return false;
  if (a.user_disabled === null || a.admin_disabled === null) return false;
  const findings = classifyIdentity({
    identityId: a.identity_id,
    source: { userDisabled: a.user_disabled, adminDisabled: a.admin_disabled },
    platform: "found",
    controls: active.map(observed),
    platformLegacy: legacy,
  });
  const pairs = findings
    .filter((f) => f.finding === AWAITING_PLATFORM && f.expected?.owner === "tool")
    .filter((f) => f.expected?.type === a.control_type)
    .map((finding) => ({ row: { identity_id: a.identity_id }, finding }));
  if (pairs.length === 0) return false;
  const due = await dueForCreate(ctx.db, ctx.runId, policy, pairs);
  return !due.has(a.identity_id);
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
