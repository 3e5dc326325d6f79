/**
 * The created_at of a listing's identities, as a partitioned listing places them in windows: each
 * page's times in epoch ms, in one buffer reused from page to page, and the earliest and latest
 * served, as the platform wrote them.
 */
import type { Identity } from "../../platform/index.ts";

export class PageTimes {
  /**
   * Filled and read by `acceptPage` in one synchronous step, so windows read side by side never
   * see another's times.
   */
  #times = new Float64Array(1000);
  #min = Number.POSITIVE_INFINITY;
  #max = Number.NEGATIVE_INFINITY;
  minIso: string | null = null;
  maxIso: string | null = null;

  /**
   * The page's created_at times (NaN where unreadable, told to `missing` first, which may throw).
   *
   * @example
   *   const ts = times.of(page, (identity) => refuse(identity)); ts[0] // 1609459200000
   */
  of(page: readonly Identity[], missing: (identity: Identity) => void): Float64Array {
    if (this.#times.length < page.length) this.#times = new Float64Array(page.length);
    for (let i = 0; i < page.length; i++) {
      const identity = page[i] as Identity;
      const t = identity.createdAt ? Math.floor(Date.parse(identity.createdAt)) : Number.NaN;
      this.#times[i] = t;
      if (Number.isNaN(t)) missing(identity);
      else this.#add(t, identity.createdAt as string);
    }
    return this.#times;
  }

  #add(t: number, iso: string): void {
    if (t < this.#min) {
      this.#min = t;
      this.minIso = iso;
    }
    if (t > this.#max) {
      this.#max = t;
      this.maxIso = iso;
    }
  }
}
