/** A record with the keyset the extended listings page on: (created_at, id). */
export interface Keyed {
  readonly createdAtMs: number;
  readonly id: string;
}

export interface KeysetPosition {
  t: number;
  id: string;
}

function compareKey(t: number, id: string, b: Keyed): number {
  if (t !== b.createdAtMs) return t < b.createdAtMs ? -1 : 1;
  return id < b.id ? -1 : id > b.id ? 1 : 0;
}

/**
 * Records kept sorted by (created_at, id) for keyset pages that neither lose nor repeat an item
 * when records are added during a walk. Filters are predicates applied while scanning: the
 * extended listings hold thousands of records, not millions, so a scan per page is cheap.
 *
 * @example
 *   const records = new SortedRecords<{ createdAtMs: number; id: string }>();
 *   records.insert({ createdAtMs: 1, id: "a" });
 *   records.page("DESC", undefined, 10, () => true); // { items: [{...}], more: false }
 */
export class SortedRecords<T extends Keyed> {
  private items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  all(): readonly T[] {
    return this.items;
  }

  insert(item: T): void {
    const last = this.items[this.items.length - 1];
    if (!last || compareKey(item.createdAtMs, item.id, last) > 0) {
      this.items.push(item);
      return;
    }
    this.items.splice(this.upperBound(item.createdAtMs, item.id), 0, item);
  }

  /** Matching records strictly after `after` in `order`, at most `limit`, and whether more match. */
  page(
    order: "ASC" | "DESC",
    after: KeysetPosition | undefined,
    limit: number,
    match: (r: T) => boolean,
  ): { items: T[]; more: boolean } {
    const n = this.items.length;
    const step = order === "ASC" ? 1 : -1;
    let i: number;
    if (order === "ASC") i = after ? this.upperBound(after.t, after.id) : 0;
    else i = after ? this.lowerBound(after.t, after.id) - 1 : n - 1;
    return this.collect(i, step, limit, match, 0);
  }

  /** Matching records in `order` after skipping `offset` matches (offset pagination). */
  pageFromOffset(
    order: "ASC" | "DESC",
    offset: number,
    limit: number,
    match: (r: T) => boolean,
  ): { items: T[]; more: boolean } {
    const start = order === "ASC" ? 0 : this.items.length - 1;
    return this.collect(start, order === "ASC" ? 1 : -1, limit, match, offset);
  }

  count(match: (r: T) => boolean): number {
    let n = 0;
    for (const r of this.items) if (match(r)) n++;
    return n;
  }

  clear(): void {
    this.items = [];
  }

  private collect(
    start: number,
    step: 1 | -1,
    limit: number,
    match: (r: T) => boolean,
    skip: number,
  ): { items: T[]; more: boolean } {
    const out: T[] = [];
    let skipped = 0;
    for (let i = start; i >= 0 && i < this.items.length; i += step) {
      const r = this.items[i]!;
      if (!match(r)) continue;
      if (skipped < skip) {
        skipped++;
        continue;
      }
      if (out.length === limit) return { items: out, more: true };
      out.push(r);
    }
    return { items: out, more: false };
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
}
