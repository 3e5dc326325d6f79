/**
 * The third side of the reconciliation: the platform's own legacy fields (`user_disabled`,
 * `admin_disabled` on its Identity), which its background migration turns into controls by
 * itself. Pure rules, used by the diff rules (`classify.ts`); README "Three-way findings" and the
 * tables of issue 27 describe them:
 *
 * | user_disabled side (L source, P platform field, C active CLIENT SELL_ONLY) | finding |
 * |---|---|
 * | L true, P true, no C | `awaiting_platform_migration` (no create unless the wait is over) |
 * | L true, P false, no C | `missing_client_control` (create) |
 * | L false, P true, no C | `platform_will_restrict` |
 * | L false, P true, C present | `unexpected_client_control`, {@link LEGACY_STILL_TRUE}, never pruned |
 * | two or more C | `duplicate_client_control` for each extra (pruned: the tool's own first) |
 *
 * | admin_disabled side (S: active SERVICE SELL_ONLY) | finding |
 * |---|---|
 * | L true, P true, no S | `awaiting_platform_migration` (service) |
 * | L true, P false, no S | `platform_unaware_of_admin_flag` |
 * | L false, P true | `source_behind_platform` (with the S it holds, if any) |
 *
 * A platform field that was not read (null) leaves the two-way rules as they were.
 */
import type { ObservedControl } from "./finding-types.ts";

export { THREE_WAY_FINDINGS } from "./finding-types.ts";

/** The platform's legacy fields as read with the identity; null: not read or not said. */
export interface PlatformLegacy {
  readonly userDisabled: boolean | null;
  readonly adminDisabled: boolean | null;
}

/** Detail of a client control that `--prune` leaves because the platform's field would bring it back. */
export const LEGACY_STILL_TRUE = "the platform's legacy user_disabled is still true";

export const AWAITING_CLIENT_DETAIL =
  "user_disabled is true here and on the platform: its own migration will create the CLIENT SELL_ONLY";
export const AWAITING_SERVICE_DETAIL =
  "admin_disabled is true here and on the platform: its own migration will create the SERVICE SELL_ONLY";
export const WILL_RESTRICT_DETAIL =
  "user_disabled is false here but the platform's legacy user_disabled is true: its migration will restrict an identity the client has cleared";
export const UNAWARE_DETAIL =
  "admin_disabled is true here but false on the platform: the platform will never create this SERVICE control; ask the platform";
export const BEHIND_DETAIL =
  "admin_disabled is false here but true on the platform: the client's table lacks an admin flag the platform holds";
export const DUPLICATE_DETAIL = "a second active CLIENT SELL_ONLY (duplicate)";

/**
 * The order in which active CLIENT SELL_ONLY controls are weighed: the one an identity keeps comes
 * first, the extras (which `--prune` deletes) after it. A control nobody may delete (not
 * overridable) ranks first, then those this tool did not create, then the tool's own (known from
 * the journal), each by id: so the extras deleted are the tool's own first, and never the last.
 * Pure.
 *
 * @example
 *   keeperFirst(controls, new Set(["c2"])) // c1 (platform's), then c2 (the tool's)
 */
export function keeperFirst(
  clients: readonly ObservedControl[],
  toolCreated: ReadonlySet<string>,
): ObservedControl[] {
  const rank = (o: ObservedControl) =>
    !o.isOverridable ? 0 : toolCreated.has(o.controlId) ? 2 : 1;
  return [...clients].sort((a, b) => {
    const r = rank(a) - rank(b);
    if (r !== 0) return r;
    return a.controlId < b.controlId ? -1 : a.controlId > b.controlId ? 1 : 0;
  });
}

/**
 * Sorts SELL_ONLY controls for the diff rules' greedy matching: by id, except that active CLIENT
 * ones follow {@link keeperFirst}, so the control an identity keeps takes the expected match and
 * the extras are the tool's own first.
 */
export function matchingOrder(
  sellOnly: readonly ObservedControl[],
  toolCreated: ReadonlySet<string>,
): ObservedControl[] {
  const byId = (a: ObservedControl, b: ObservedControl) =>
    a.controlId < b.controlId ? -1 : a.controlId > b.controlId ? 1 : 0;
  const clients = keeperFirst(
    sellOnly.filter((o) => o.setBy === "client"),
    toolCreated,
  );
  return [...clients, ...sellOnly.filter((o) => o.setBy !== "client").sort(byId)];
}
