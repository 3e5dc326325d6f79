/**
 * The rule that keeps `--prune` from loosening a restriction. Pure: the diff rules apply it to the
 * snapshot, the executor applies it again to the controls it re-reads right before a delete.
 */
import type { LegacyFlags } from "./mapping.ts";

/**
 * The outcome of an unexpected client control that `--prune` keeps because the identity must stay
 * restricted. A finding's detail (and so diff.csv's outcome) and a skipped delete's journal outcome
 * both carry it verbatim; documented in the README.
 */
export const KEPT_RESTRICTED = "kept: identity must stay restricted";

/**
 * Whether deleting the SELL_ONLY `targetId` leaves the identity as restricted as its legacy flags
 * say: always when neither flag is true, otherwise only when another active SELL_ONLY (of any
 * owner) stays after the delete. Unknown flags (`null`) count as restricted: when in doubt, keep.
 *
 * @example
 *   mayDeleteSellOnly({ userDisabled: false, adminDisabled: true }, ["c1"], "c1") // false
 *   mayDeleteSellOnly({ userDisabled: false, adminDisabled: true }, ["c1", "c2"], "c1") // true
 *   mayDeleteSellOnly({ userDisabled: false, adminDisabled: false }, ["c1"], "c1") // true
 */
export function mayDeleteSellOnly(
  flags: LegacyFlags | null,
  activeSellOnlyIds: Iterable<string>,
  targetId: string,
): boolean {
  if (flags && !flags.userDisabled && !flags.adminDisabled) return true;
  for (const id of activeSellOnlyIds) if (id !== targetId) return true;
  return false;
}

/** Why a delete was kept, for the journal's error column and logs. */
export function keptReason(flags: LegacyFlags | null): string {
  const tail = "no other active SELL_ONLY would stay after the delete";
  if (!flags) return `the source flags are unknown and ${tail}`;
  const set = [flags.userDisabled && "user_disabled", flags.adminDisabled && "admin_disabled"]
    .filter(Boolean)
    .join(" and ");
  const verb = flags.userDisabled && flags.adminDisabled ? "are" : "is";
  return `${set} ${verb} true and ${tail}`;
}
