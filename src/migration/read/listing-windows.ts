/**
 * The bookkeeping of a partitioned listing, pure and synchronous: disjoint created_at windows
 * [lo, hi) in epoch ms, each walked by up to two cursors, one from each end (ASC from lo, DESC
 * from hi), that stop where they meet. Windows always tile the whole time line, so together they
 * cover the listing exactly once whatever the split points; what is known (a first page in each
 * order, the density seen so far) only decides where splitting pays.
 *
 * Times are compared in whole milliseconds. A split edge is a whole millisecond m, and for any
 * platform precision "t < m" holds exactly when floor(t) < m, so the platform's
 * `created_at.lt=m` / `created_at.gte=m` and our own checks put every identity on the same side.
 * Identities that share a millisecond where two cursors meet are told apart by id (the edge sets).
 */

export type Order = "ASC" | "DESC";

/** An identity as the listing bookkeeping sees it. */
export interface ListedItem {
  readonly id: string;
  /** created_at in epoch ms (floor); NaN when the platform gave none. */
  readonly t: number;
}

export interface Walker {
  readonly order: Order;
  /** The window it walks; a split may move a DESC walker to the upper part. */
  window: Window;
  /** Query bounds fixed when the walker started (ms; ±Infinity: no bound). */
  readonly gte: number;
  readonly lt: number;
  /** created_at of the first item it emitted, for the density estimate. */
  firstT: number;
  emitted: number;
  pages: number;
  /** Identities per ms of created_at in its latest page (Infinity: all on one ms); null: none yet. */
  lastDensity: number | null;
  finished: boolean;
}

export interface Window {
  lo: number;
  hi: number;
  asc: Walker | null;
  desc: Walker | null;
  /** Every item with t < ascPos is covered, and those with t === ascPos whose id is in ascEdge. */
  ascPos: number;
  ascEdge: Set<string>;
  /** Every item with t > descPos (and t >= hi) is covered, and those at descPos in descEdge. */
  descPos: number;
  descEdge: Set<string>;
  done: boolean;
}

export function newWindow(lo: number, hi: number): Window {
  return {
    lo,
    hi,
    asc: null,
    desc: null,
    ascPos: lo,
    ascEdge: new Set(),
    descPos: hi,
    descEdge: new Set(),
    done: false,
  };
}

/** A walker over what is still uncovered of `w`, from the given end. */
export function addWalker(w: Window, order: Order): Walker {
  const walker: Walker = {
    order,
    window: w,
    // Bounds from the current coverage: what lies outside is read already; the edge millisecond
    // is included and its ids already read are skipped.
    gte: w.ascPos,
    lt: w.descPos === w.hi ? w.hi : w.descPos + 1,
    firstT: Number.NaN,
    emitted: 0,
    pages: 0,
    lastDensity: null,
    finished: false,
  };
  if (order === "ASC") w.asc = walker;
  else w.desc = walker;
  return walker;
}

/**
 * Takes one page of `walker` (in its order) and returns the items not covered yet, updating the
 * window's coverage. `crossed` is true when the page reached what the window's other cursor, or
 * the window's bound, already covers: the window is then complete.
 */
export function acceptPage<T extends { readonly id: string }>(
  walker: Walker,
  items: readonly T[],
  /** Item `i`'s created_at in epoch ms; by default its own `t` ({@link ListedItem}). */
  tOf: (i: number) => number = (i) => (items[i] as unknown as ListedItem).t,
): { fresh: T[]; crossed: boolean; duplicates: number } {
  const w = walker.window;
  const fresh: T[] = [];
  let crossed = false;
  let duplicates = 0;
  if (items.length > 1) {
    walker.lastDensity = items.length / Math.abs(tOf(items.length - 1) - tOf(0));
  }
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as T;
    const t = tOf(i);
    const id = item.id;
    if (walker.order === "ASC") {
      // Past the meeting point: the other cursor's (read on, as a page may come out of order).
      if (t >= w.hi || t > w.descPos) {
        crossed = true;
        continue;
      }
      if (t < w.lo) continue;
      // Read already: by the other cursor where the two meet, or by this end's previous cursor.
      const dup = (t === w.descPos && w.descEdge.has(id)) || (t === w.ascPos && w.ascEdge.has(id));
      if (t > w.ascPos) {
        w.ascPos = t;
        // Emptied, not replaced: a set a millisecond was most of a page's garbage.
        w.ascEdge.clear();
      }
      w.ascEdge.add(id);
      if (dup) {
        duplicates += 1;
        continue;
      }
    } else {
      if (t < w.lo || t < w.ascPos) {
        crossed = true;
        continue;
      }
      if (t >= w.hi) continue;
      const dup = (t === w.ascPos && w.ascEdge.has(id)) || (t === w.descPos && w.descEdge.has(id));
      if (t < w.descPos) {
        w.descPos = t;
        w.descEdge.clear();
      }
      w.descEdge.add(id);
      if (dup) {
        duplicates += 1;
        continue;
      }
    }
    if (Number.isNaN(walker.firstT)) walker.firstT = t;
    walker.emitted += 1;
    fresh.push(item);
  }
  if (crossed) w.done = true;
  return { fresh, crossed, duplicates };
}

/** The listing's identities per ms of created_at seen so far, or null before any span. */
export function density(windows: readonly Window[]): number | null {
  let items = 0;
  let span = 0;
  for (const w of windows) {
    if (w.asc && w.asc.emitted > 1 && Number.isFinite(w.ascPos)) {
      items += w.asc.emitted;
      span += w.ascPos - w.asc.firstT;
    }
    if (w.desc && w.desc.emitted > 1 && Number.isFinite(w.descPos)) {
      items += w.desc.emitted;
      span += w.desc.firstT - w.descPos;
    }
  }
  return span > 0 ? items / span : null;
}

/**
 * Estimated identities left to read in `w`, from the density of its cursors' latest pages (else
 * the listing's so far). A window open on one side, or any window before a density is known,
 * gets `openEstimate` (what is expected of the whole listing and not read yet;
 * Infinity when nothing is known).
 */
export function remaining(w: Window, perMs: number | null, openEstimate: number): number {
  if (w.done) return 0;
  const lo = w.ascPos;
  const hi = w.descPos;
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return openEstimate;
  if (hi - lo <= 0) return 0;
  // The window's own latest pages tell its density best: a gap in created_at elsewhere (or in an
  // earlier page) must not make a dense window look nearly read.
  const own = [w.asc?.lastDensity, w.desc?.lastDensity].filter((d): d is number => d != null);
  const density = own.length > 0 ? Math.max(...own) : perMs;
  if (density === null) return openEstimate;
  return (hi - lo) * density;
}

const walkers = (w: Window) => (w.asc ? 1 : 0) + (w.desc ? 1 : 0);

/**
 * One more cursor where it helps most: the window with the most left per cursor gets its missing
 * end, or, with both ends walked, is split at the middle of what is left (the lower part keeps
 * the ASC cursor and gets a new DESC one from the edge; the upper part keeps the DESC cursor).
 * Returns the new walker, or null when no window has `minItems` per cursor left to share.
 */
export function grow(
  windows: Window[],
  perMs: number | null,
  minItems: number,
  openEstimate = Number.POSITIVE_INFINITY,
): Walker | null {
  let best: Window | null = null;
  let bestLoad = 0;
  for (const w of windows) {
    const n = walkers(w);
    // A window one of whose cursors handed over to the other is about to be read: leave it be.
    if (w.done || n === 0 || w.asc?.finished || w.desc?.finished) continue;
    const load = remaining(w, perMs, openEstimate) / (n + 1);
    // Splitting needs both ends known and a millisecond strictly between them.
    const canSplit =
      n < 2 ||
      (Number.isFinite(w.ascPos) && Number.isFinite(w.descPos) && w.descPos - w.ascPos >= 2);
    if (canSplit && load >= minItems && load > bestLoad) {
      best = w;
      bestLoad = load;
    }
  }
  if (!best) return null;
  if (!best.desc) return addWalker(best, "DESC");
  if (!best.asc) return addWalker(best, "ASC");
  const m = best.ascPos + Math.floor((best.descPos - best.ascPos) / 2);
  const upper = newWindow(m, best.hi);
  upper.desc = best.desc;
  upper.desc.window = upper;
  upper.descPos = best.descPos;
  upper.descEdge = best.descEdge;
  best.hi = m;
  best.desc = null;
  best.descPos = m;
  best.descEdge = new Set();
  windows.push(upper);
  return addWalker(best, "DESC");
}

/**
 * A walker to take over from one that failed: same window, same end, starting from what is
 * covered (the edge millisecond is read again; its ids are skipped).
 */
export function replaceWalker(failed: Walker): Walker {
  const w = failed.window;
  if (failed.order === "ASC") w.asc = null;
  else w.desc = null;
  return addWalker(w, failed.order);
}
