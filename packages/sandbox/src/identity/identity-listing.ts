import {
  type KeysetIndex,
  type KeysetPosition,
  mergeWalks,
  type Order,
  type TimeBounds,
  takePage,
  type Walk,
} from "../paging/keyset-index.ts";
import { type SandboxStore, type StoredIdentity, updatedAtMsOf } from "./identity-store.ts";
import type { IdentityStatus, IdentityType } from "./types.ts";

/** The filters of `GET /v2/identity/identities`, parsed. Empty lists and undefined mean "any". */
export interface IdentityFilter {
  /** Identities with an active control of any of these types. */
  readonly controlTypes: readonly string[];
  /** Identities with an active control of any of these reason codes. */
  readonly reasonCodes: readonly string[];
  readonly summaryStatus: IdentityStatus | undefined;
  readonly identityType: IdentityType | undefined;
  readonly created: TimeBounds;
  readonly updated: TimeBounds | undefined;
}

/**
 * One keyset page of identities matching `filter`, strictly after `after` in `order`.
 *
 * With control filters, the walk runs over the identities holding an active control of a listed
 * type (or reason code), merged in keyset order, never over every identity. Given both, an
 * identity matches when one of its active controls has a listed type *and* a listed reason code.
 * created_at bounds narrow every walk by binary search; the other filters are tested per record.
 *
 * @example
 *   pageIdentities(store, { ...NO_FILTER, controlTypes: ["SELL_ONLY"] }, "ASC", undefined, 1000);
 */
export function pageIdentities(
  store: SandboxStore,
  filter: IdentityFilter,
  order: Order,
  after: KeysetPosition | undefined,
  limit: number,
): { items: StoredIdentity[]; more: boolean } {
  const walk = sourceWalk(store, filter, order, after);
  return takePage(walk, limit, recordMatch(filter));
}

function sourceWalk(
  store: SandboxStore,
  filter: IdentityFilter,
  order: Order,
  after: KeysetPosition | undefined,
): Walk<StoredIdentity> {
  const byType = filter.controlTypes.map((t) => store.active.byType(t));
  const byReason = filter.reasonCodes.map((r) => store.active.byReason(r));
  let sources: (KeysetIndex<StoredIdentity> | undefined)[];
  if (byType.length === 0 && byReason.length === 0) sources = [store.identities];
  else if (byReason.length === 0) sources = byType;
  else if (byType.length === 0) sources = byReason;
  // Both given: walk the smaller side, test the other per record.
  else sources = total(byType) <= total(byReason) ? byType : byReason;
  const walks = sources
    .filter((s): s is KeysetIndex<StoredIdentity> => s !== undefined && s.size > 0)
    .map((s) => s.walk(order, after, filter.created));
  return walks.length === 0 ? { next: () => undefined } : mergeWalks(walks, order);
}

const total = (indexes: readonly (KeysetIndex<StoredIdentity> | undefined)[]) =>
  indexes.reduce((n, i) => n + (i?.size ?? 0), 0);

/** The per-record part of the filter, or undefined when the walk alone decides. */
function recordMatch(filter: IdentityFilter): ((i: StoredIdentity) => boolean) | undefined {
  const { summaryStatus, identityType, updated, controlTypes, reasonCodes } = filter;
  const bothControlFilters = controlTypes.length > 0 && reasonCodes.length > 0;
  if (!summaryStatus && !identityType && !updated && !bothControlFilters) return undefined;
  const types = new Set(controlTypes);
  const reasons = new Set(reasonCodes);
  return (i) => {
    if (summaryStatus !== undefined && i.summaryStatus !== summaryStatus) return false;
    if (identityType !== undefined && i.identityType !== identityType) return false;
    if (updated !== undefined) {
      const t = updatedAtMsOf(i);
      if (t < updated.lo || t > updated.hi) return false;
    }
    if (bothControlFilters) {
      return (
        i.controls?.some(
          (c) => c.deleted_at === undefined && types.has(c.type) && reasons.has(c.reason_code),
        ) ?? false
      );
    }
    return true;
  };
}
