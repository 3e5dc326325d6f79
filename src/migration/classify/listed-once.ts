/**
 * Each listed identity is classified once, however often a listing serves it. A live dataset under
 * a cursor can serve an identity again: on a later page, twice within a page, where two created_at
 * windows meet, in any order. Classified twice, its page's findings collided in one statement (SQL
 * refused it) or were skipped as "already stored" (the rest of the page lost its findings).
 *
 * - within a batch, the last copy stands (the freshest the platform served in it);
 * - across batches, the first claim stands: a later copy is dropped before anything is stored;
 * - every dropped copy is counted: the report names them a platform anomaly.
 *
 * Claims are synchronous, so pages classified side by side never both take one identity. Ids of the
 * source index are remembered by its own "listed" mark (no extra memory); the few others that matter
 * (a control holder the source does not hold) in a Set.
 *
 * @example
 *   const once = new ListedOnce(index);
 *   const fresh = once.claim(page); // the page without identities already classified
 *   once.repeats; // copies dropped so far
 */
import type { SourceIndex } from "../read/source-index.ts";

/** What the claim reads of a listed identity. */
export interface ClaimedItem {
  readonly id: string;
  readonly controls: readonly unknown[];
}

/**
 * Keeps one copy of each id in `items`, the last one served, in first-seen order. Returns the
 * items and how many copies were dropped.
 */
export function lastCopies<T extends { readonly id: string }>(
  items: readonly T[],
): { items: T[]; dropped: number } {
  // A page rarely repeats an id: one Set pass proves it, and the page is kept as it is.
  const seen = new Set<string>();
  for (const item of items) seen.add(item.id);
  if (seen.size === items.length) return { items: items as T[], dropped: 0 };
  const at = new Map<string, number>();
  const out: T[] = [];
  for (const item of items) {
    const i = at.get(item.id);
    if (i === undefined) {
      at.set(item.id, out.length);
      out.push(item);
    } else out[i] = item;
  }
  return { items: out, dropped: items.length - out.length };
}

export class ListedOnce {
  readonly #index: SourceIndex;
  /** Claimed ids the source index does not hold (control holders outside the source). */
  readonly #outside = new Set<string>();
  #repeats = 0;

  constructor(index: SourceIndex) {
    this.#index = index;
  }

  /** Copies served again and dropped (within or across pages). */
  get repeats(): number {
    return this.#repeats;
  }

  /** Counts copies dropped elsewhere (a page deduplicated before it was held or stored). */
  countRepeats(n: number): void {
    this.#repeats += n;
  }

  /**
   * The items not claimed before (the last copy of each), now claimed. An identity without a
   * control that the source does not hold is passed through unclaimed: it is stored nowhere.
   */
  claim<T extends ClaimedItem>(items: readonly T[]): T[] {
    const { items: once, dropped } = lastCopies(items);
    this.#repeats += dropped;
    const fresh: T[] = [];
    for (const item of once) {
      if (this.#take(item.id, item.controls.length > 0)) fresh.push(item);
      else this.#repeats += 1;
    }
    return fresh;
  }

  /** Claims ids read back from the database (a catch-up): those claimed before are left out. */
  claimIds<T extends { readonly identity_id: string }>(rows: readonly T[]): T[] {
    return rows.filter((r) => this.#take(r.identity_id, true));
  }

  #take(id: string, holds: boolean): boolean {
    if (this.#outside.size > 0 && this.#outside.has(id)) return false;
    if (this.#index.get(id) !== undefined) return this.#index.markListedOnce(id);
    if (!holds) return true;
    this.#outside.add(id);
    return true;
  }
}
