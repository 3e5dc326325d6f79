/**
 * A listing of `GET /v2/identity/identities` read as disjoint created_at windows side by side,
 * under the one rate budget of that path. A cursor listing is sequential, so its floor is
 * pages × max(1 / rate, page latency); K cursors bring it back to pages / rate once
 * K ≈ page latency × rate (the time to store a page counts too when it is the longer). The windows' bookkeeping lives in `listing-windows.ts`.
 */

import { IDENTITY_PATHS, MAX_PAGE_SIZE } from "../contract/index.ts";
import type { Logger } from "../log.ts";
import { type Identity, type ListIdentitiesOptions, PlatformError } from "../platform/index.ts";
import {
  acceptPage,
  addWalker,
  density,
  grow,
  newWindow,
  remaining,
  type Walker,
  type Window,
} from "./listing-windows.ts";
import { ask, iso, walkWithRetries } from "./window-walk.ts";

export interface PartitionedListingOptions {
  /** The client's listing (`client.listIdentities`); each window pages it with its own cursor. */
  readonly list: (opts: ListIdentitiesOptions) => AsyncGenerator<Identity[]>;
  /** `control_types`: e.g. ["SELL_ONLY"] for the filtered listing; none for bulk. */
  readonly controlTypes?: readonly string[];
  /** At most this many cursors at once (--listing-parallelism); 1 reads a single cursor. */
  readonly maxParallel: number;
  /** The path's current rate budget, requests/s. */
  readonly rate: () => number;
  /** Page latency measured so far (ms), or null before the first answer. */
  readonly latencyMs: () => number | null;
  /** A previous run's page latency, to open both ends at once before anything is measured. */
  readonly latencyHintMs?: number | null;
  /** Identities the listing is expected to hold (a previous run's count), when known. */
  readonly expectedItems?: number | null;
  /**
   * Stores one page of new identities. Pages of different windows may be stored at once; they
   * never hold the same identity.
   */
  readonly onPage: (identities: Identity[]) => Promise<void>;
  /** Identities per page (default 1000, the platform's maximum). */
  readonly pageSize?: number;
  /** Attempts per window after the client's own retries gave up (default 3). */
  readonly windowAttempts?: number;
  readonly retryBaseMs?: number;
  readonly logger?: Logger;
  readonly signal?: AbortSignal;
}

export interface ListingStats {
  /** Pages received (requests that answered). */
  readonly pages: number;
  /** Distinct identities stored. */
  readonly identities: number;
  /** Most cursors that ran at once. */
  readonly peakParallel: number;
  /** Windows the listing ended with. */
  readonly windows: number;
  /** Windows restarted alone after a failure. */
  readonly windowRetries: number;
  /** Identities read twice where two cursors met on one millisecond, and stored once. */
  readonly duplicates: number;
  readonly createdAtMin: string | null;
  readonly createdAtMax: string | null;
}

/**
 * Reads the whole listing exactly once, in as many windows as the latency needs, and resolves
 * once every window has reached its end: only then is the listing complete (so an identity
 * missing from it is missing from the platform). A window whose request still fails after the
 * client's retries is restarted alone from what it had covered; the others carry on.
 *
 * @example
 *   const stats = await listPartitioned({ list: (o) => client.listIdentities(o),
 *     controlTypes: ["SELL_ONLY"], maxParallel: 8, rate: () => 40, latencyMs: () => 150,
 *     onPage: (ids) => store(ids) });
 */
export async function listPartitioned(o: PartitionedListingOptions): Promise<ListingStats> {
  const windows: Window[] = [newWindow(Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY)];
  const stop = new AbortController();
  const signal = o.signal ? AbortSignal.any([stop.signal, o.signal]) : stop.signal;
  const running = new Set<Promise<void>>();
  const attempts = o.windowAttempts ?? 3;
  const pageSize = o.pageSize ?? MAX_PAGE_SIZE;
  let duplicates = 0;
  let failure: { err: unknown } | null = null;
  let pages = 0;
  let identities = 0;
  let peak = 0;
  let retries = 0;
  let active = 0;
  let minT = Number.POSITIVE_INFINITY;
  let maxT = Number.NEGATIVE_INFINITY;
  let minIso: string | null = null;
  let maxIso: string | null = null;
  // Without created_at the listing cannot be split; it then stays one cursor.
  let partitionable = o.maxParallel > 1;
  let split = false;

  const target = () => {
    if (!partitionable) return 1;
    const latency = o.latencyMs() ?? o.latencyHintMs ?? null;
    if (latency === null) return 1;
    const cycle = Math.max(latency, stores > 0 ? storeMs / stores : 0);
    // Headroom: the cycle is a median, and a cursor short of the budget is time lost for good,
    // while one too many only waits for its turn at the budget.
    return Math.max(1, Math.min(o.maxParallel, Math.ceil((cycle / 1000) * o.rate() * 1.25) + 1));
  };
  const openEstimate = () =>
    o.expectedItems == null ? Number.POSITIVE_INFINITY : Math.max(0, o.expectedItems - identities);

  /**
   * created_at in epoch ms of each identity of a page, in one buffer the listing reuses: it is
   * filled and read by `acceptPage` in one synchronous step, so windows never see another's.
   */
  let times = new Float64Array(1000);
  const timesOf = (page: readonly Identity[]): Float64Array => {
    if (times.length < page.length) times = new Float64Array(page.length);
    for (let i = 0; i < page.length; i++) {
      const identity = page[i] as Identity;
      const t = identity.createdAt ? Math.floor(Date.parse(identity.createdAt)) : Number.NaN;
      times[i] = t;
      if (Number.isNaN(t)) {
        if (split) {
          throw new PlatformError({
            kind: "protocol",
            classification: "fatal",
            endpoint: `GET ${IDENTITY_PATHS.identities}`,
            detail: `identity ${identity.id} has no readable created_at; a partitioned listing needs it (--listing-parallelism 1 reads one cursor)`,
          });
        }
        partitionable = false;
        continue;
      }
      if (t < minT) {
        minT = t;
        minIso = identity.createdAt;
      }
      if (t > maxT) {
        maxT = t;
        maxIso = identity.createdAt;
      }
    }
    return times;
  };

  // Storing overlaps the next page's request; when it takes longer than the request, it sets a
  // cursor's pace, so it counts in how many cursors keep the budget busy. Windows never share an
  // identity, so their pages are stored side by side without waiting on each other.
  let storeMs = 0;
  let stores = 0;
  const store = async (items: Identity[]) => {
    if (items.length === 0) return;
    const t0 = performance.now();
    await o.onPage(items);
    storeMs += performance.now() - t0;
    stores += 1;
  };

  /**
   * Two cursors about to meet would both ask for the last page between them: when less than a
   * page is left, this one stops and the other reads to the meeting point (decided synchronously,
   * so the two never both stop).
   */
  function handsOver(walker: Walker): boolean {
    const w = walker.window;
    const other = walker.order === "ASC" ? w.desc : w.asc;
    if (!other || other.finished) return false;
    if (remaining(w, density(windows), Number.POSITIVE_INFINITY) >= pageSize) return false;
    walker.finished = true;
    return true;
  }

  async function walkOnce(walker: Walker): Promise<void> {
    const gen = o.list({
      limit: pageSize,
      order: walker.order,
      controlTypes: o.controlTypes,
      createdAtGte: iso(walker.gte),
      createdAtLt: iso(walker.lt),
      signal,
    });
    let next = ask(gen);
    /**
     * Takes one page: true when the walk goes on. Its own frame, so a stored page is garbage once
     * stored, not held while the next one travels.
     */
    const take = async (page: Identity[]): Promise<boolean> => {
      pages += 1;
      walker.pages += 1;
      if (walker.window.done) return false;
      const ts = timesOf(page);
      const { fresh, crossed, ...seen } = partitionable
        ? acceptPage(walker, page, (i) => ts[i] as number)
        : { fresh: page, crossed: false, duplicates: 0 };
      duplicates += seen.duplicates;
      const more = !crossed && !walker.window.done && !handsOver(walker);
      // The next page travels while this one is stored.
      if (more) next = ask(gen);
      identities += fresh.length;
      await store(fresh);
      rebalance();
      return more;
    };
    try {
      for (;;) {
        const r = await next;
        // The window's own query is exhausted: everything in the window has been read.
        if (r.done) {
          walker.window.done = true;
          return;
        }
        if (!(await take(r.value))) return;
      }
    } finally {
      await gen.return(undefined).catch(() => {});
    }
  }

  const walk = (first: Walker) =>
    walkWithRetries(first, walkOnce, {
      attempts,
      retryBaseMs: o.retryBaseMs,
      logger: o.logger,
      signal,
      onRetry: () => {
        retries += 1;
      },
    });

  function start(walker: Walker): void {
    active += 1;
    peak = Math.max(peak, active);
    const p = walk(walker)
      .catch((err) => {
        failure ??= { err };
        stop.abort(err);
      })
      .finally(() => {
        active -= 1;
        walker.finished = true;
        running.delete(p);
      });
    running.add(p);
  }

  function rebalance(): void {
    if (failure || signal.aborted) return;
    while (active < target()) {
      const walker = grow(windows, density(windows), 2 * pageSize, openEstimate());
      if (!walker) return;
      split = true;
      start(walker);
    }
  }

  start(addWalker(windows[0] as Window, "ASC"));
  rebalance();
  while (running.size > 0) await Promise.all([...running]);
  if (failure) throw (failure as { err: unknown }).err;
  if (o.signal?.aborted) throw o.signal.reason;
  const open = windows.filter((w) => !w.done);
  if (open.length > 0) {
    throw new Error(`listing incomplete: ${open.length} windows did not reach their end`);
  }
  return {
    pages,
    identities,
    peakParallel: peak,
    windows: windows.length,
    windowRetries: retries,
    duplicates,
    createdAtMin: minIso,
    createdAtMax: maxIso,
  };
}
