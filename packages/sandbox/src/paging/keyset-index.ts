/** A record with the keyset every listing pages on: (created_at, id). */
export interface Keyed {
  readonly createdAtMs: number;
  readonly id: string;
}

/** Where a walk stopped: the key of the last item returned. */
export interface KeysetPosition {
  t: number;
  id: string;
}

/** Inclusive created_at bounds in epoch ms; infinite when open. */
export interface TimeBounds {
  lo: number;
  hi: number;
}

export const OPEN_BOUNDS: TimeBounds = Object.freeze({
  lo: Number.NEGATIVE_INFINITY,
  hi: Number.POSITIVE_INFINITY,
});

/** A forward-only walk over records in keyset order; `next()` is undefined at the end. */
export interface Walk<T> {
  next(): T | undefined;
}

export type Order = "ASC" | "DESC";

function compareKey(t: number, id: string, b: Keyed): number {
  if (t !== b.createdAtMs) return t < b.createdAtMs ? -1 : 1;
  return id < b.id ? -1 : id > b.id ? 1 : 0;
}

const compareItems = (a: Keyed, b: Keyed) => compareKey(a.createdAtMs, a.id, b);

/**
 * Records kept sorted by (created_at, id), for keyset pages that neither lose nor repeat an item
 * when records are added or removed during a walk. The one index behind every listing: all
 * identities, the identities holding an active control of a type or reason code, quote executions
 * per profile, deposit addresses. created_at bounds are binary searches, not scans.
 *
 * @example
 *   const index = new KeysetIndex<{ createdAtMs: number; id: string }>();
 *   index.insert({ createdAtMs: 1, id: "a" });
 *   takePage(index.walk("DESC", undefined), 10); // { items: [{...}], more: false }
 */
export class KeysetIndex<T extends Keyed> {
  private items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  all(): readonly T[] {
    return this.items;
  }

  /** Adds one record: an append when it sorts last (the usual case), else a splice. */
  insert(item: T): void {
    const last = this.items[this.items.length - 1];
    if (!last || compareItems(item, last) > 0) this.items.push(item);
    else this.items.splice(this.upperBound(item.createdAtMs, item.id), 0, item);
  }

  /**
   * Adds a batch of records not yet in the index. Sorting the batch and merging keeps a
   * million-record seed O(n log n) instead of n splices.
   */
  addMany(batch: readonly T[]): void {
    if (batch.length === 0) return;
    const sorted = batch.slice().sort(compareItems);
    const last = this.items[this.items.length - 1];
    if (!last || compareItems(last, sorted[0]!) < 0) {
      for (const item of sorted) this.items.push(item);
    } else if (sorted.length === 1) {
      this.insert(sorted[0]!);
    } else {
      this.items = mergeSorted(this.items, sorted);
    }
  }

  /** Removes the record with this key; false when it is not in the index. */
  remove(item: Keyed): boolean {
    const i = this.lowerBound(item.createdAtMs, item.id);
    const found = this.items[i];
    if (!found || found.id !== item.id || found.createdAtMs !== item.createdAtMs) return false;
    this.items.splice(i, 1);
    return true;
  }

  clear(): void {
    this.items = [];
  }

  /**
   * Walks the records strictly after `after` in `order` whose created_at lies within `bounds`.
   * Both ends are found by binary search, so a narrow time window costs its size, not the index's.
   */
  walk(order: Order, after: KeysetPosition | undefined, bounds: TimeBounds = OPEN_BOUNDS): Walk<T> {
    const items = this.items;
    if (order === "ASC") {
      let i = Math.max(
        after ? this.upperBound(after.t, after.id) : 0,
        this.firstAtOrAfter(bounds.lo),
      );
      const end = this.firstAfter(bounds.hi);
      return { next: () => (i < end ? items[i++] : undefined) };
    }
    let i = Math.min(
      after ? this.lowerBound(after.t, after.id) - 1 : items.length - 1,
      this.firstAfter(bounds.hi) - 1,
    );
    const end = this.firstAtOrAfter(bounds.lo);
    return { next: () => (i >= end ? items[i--] : undefined) };
  }

  /** Matching records strictly after `after` in `order`, at most `limit`, and whether more match. */
  page(
    order: Order,
    after: KeysetPosition | undefined,
    limit: number,
    match?: (r: T) => boolean,
  ): { items: T[]; more: boolean } {
    return takePage(this.walk(order, after), limit, match);
  }

  /** Matching records in `order` after skipping `offset` matches (offset pagination). */
  pageFromOffset(
    order: Order,
    offset: number,
    limit: number,
    match: (r: T) => boolean,
  ): { items: T[]; more: boolean } {
    const walk = this.walk(order, undefined);
    let skipped = 0;
    const skipping = (r: T) => {
      if (!match(r)) return false;
      if (skipped < offset) {
        skipped++;
        return false;
      }
      return true;
    };
    return takePage(walk, limit, skipping);
  }

  count(match: (r: T) => boolean): number {
    let n = 0;
    for (const r of this.items) if (match(r)) n++;
    return n;
  }

  /** First index whose key is greater than (t, id). */
  private upperBound(t: number, id: string): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKey(t, id, this.items[mid]!) >= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First index whose key is greater than or equal to (t, id). */
  private lowerBound(t: number, id: string): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKey(t, id, this.items[mid]!) > 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First index whose created_at is >= t. */
  private firstAtOrAfter(t: number): number {
    if (t === Number.NEGATIVE_INFINITY) return 0;
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.items[mid]!.createdAtMs < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First index whose created_at is > t. */
  private firstAfter(t: number): number {
    if (t === Number.POSITIVE_INFINITY) return this.items.length;
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.items[mid]!.createdAtMs <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/**
 * Up to `limit` records of a walk that pass `match`, and whether one more would follow. The walk
 * is read one record past the page so that the last page says so and no empty page follows it.
 */
export function takePage<T>(
  walk: Walk<T>,
  limit: number,
  match?: (r: T) => boolean,
): { items: T[]; more: boolean } {
  const items: T[] = [];
  for (let r = walk.next(); r !== undefined; r = walk.next()) {
    if (match && !match(r)) continue;
    if (items.length === limit) return { items, more: true };
    items.push(r);
  }
  return { items, more: false };
}

/**
 * The union of several walks in the same order, each record once: a record held by two indexes
 * (an identity with a SELL_ONLY and a FROZEN control) is the same object, and sorts next to itself.
 */
export function mergeWalks<T extends Keyed>(walks: readonly Walk<T>[], order: Order): Walk<T> {
  if (walks.length === 1) return walks[0]!;
  const heads = walks.map((w) => w.next());
  const sign = order === "ASC" ? 1 : -1;
  let last: T | undefined;
  return {
    next: () => {
      for (;;) {
        let best = -1;
        for (let k = 0; k < heads.length; k++) {
          const h = heads[k];
          if (h === undefined) continue;
          if (best < 0 || sign * compareItems(h, heads[best]!) < 0) best = k;
        }
        if (best < 0) return undefined;
        const item = heads[best]!;
        heads[best] = walks[best]!.next();
        if (item !== last) {
          last = item;
          return item;
        }
      }
    },
  };
}

function mergeSorted<T extends Keyed>(a: T[], b: T[]): T[] {
  const out: T[] = new Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) {
    out[k++] = compareItems(a[i]!, b[j]!) <= 0 ? a[i++]! : b[j++]!;
  }
  while (i < a.length) out[k++] = a[i++]!;
  while (j < b.length) out[k++] = b[j++]!;
  return out;
}
