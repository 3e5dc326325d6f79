/**
 * A listing of `GET /v2/identity/identities` read as disjoint created_at windows side by side,
 * under the one rate budget of that path. A cursor listing is sequential, so its floor is
 * pages × max(1 / rate, page latency); K cursors bring it back to pages / rate once
 * K ≈ page latency × rate (the time to store a page counts too when it is the longer). The
 * windows' bookkeeping lives in `listing-windows.ts`, the listing's phases in `listing-phase.ts`.
 */

import pLimit, { type LimitFunction } from "p-limit";
import { IDENTITY_PATHS, MAX_PAGE_SIZE } from "../../contract/index.ts";
import { type Identity, PlatformError } from "../../platform/index.ts";
import {
  cursorPlan,
  cursorTarget,
  firstListingState,
  type ListingEvent,
  type ListingState,
  nextListingState,
  windowed,
} from "./listing-phase.ts";
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
import { PageTimes } from "./page-times.ts";
import type { ListingStats, PartitionedListingOptions } from "./partitioned-listing-types.ts";
import { ask, iso, walkWithRetries } from "./window-walk.ts";

export type { ListingStats, PartitionedListingOptions } from "./partitioned-listing-types.ts";

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
export function listPartitioned(o: PartitionedListingOptions): Promise<ListingStats> {
  return new PartitionedListing(o).run();
}

/** The listing's counts, as they grow. */
interface Tally {
  pages: number;
  identities: number;
  duplicates: number;
  retries: number;
  peak: number;
  /** Time spent storing pages, and how many: a store longer than a request sets the pace. */
  storeMs: number;
  stores: number;
}

/**
 * One listing's run: its phase (`listing-phase.ts`), its windows, and the cursors reading them
 * side by side (at most `maxParallel`, through p-limit).
 */
export class PartitionedListing {
  readonly #o: PartitionedListingOptions;
  #state: ListingState;
  readonly #windows: Window[] = [newWindow(Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY)];
  readonly #stop = new AbortController();
  readonly #signal: AbortSignal;
  readonly #limit: LimitFunction;
  readonly #pageSize: number;
  readonly #tally: Tally = {
    ...{ pages: 0, identities: 0, duplicates: 0, retries: 0, peak: 0, storeMs: 0, stores: 0 },
  };
  readonly #times = new PageTimes();
  #active = 0;
  #drained: () => void = () => {};

  constructor(o: PartitionedListingOptions) {
    this.#o = o;
    this.#state = firstListingState(o.maxParallel);
    this.#signal = o.signal ? AbortSignal.any([this.#stop.signal, o.signal]) : this.#stop.signal;
    this.#limit = pLimit(Math.max(1, o.maxParallel));
    this.#pageSize = o.pageSize ?? MAX_PAGE_SIZE;
  }

  get state(): ListingState {
    return this.#state;
  }

  async run(): Promise<ListingStats> {
    const drained = new Promise<void>((resolve) => {
      this.#drained = resolve;
    });
    this.#start(addWalker(this.#windows[0] as Window, "ASC"));
    this.#rebalance();
    await drained;
    this.#on({ kind: "drained" });
    if (this.#state.phase === "failed") throw this.#state.err;
    if (this.#o.signal?.aborted) throw this.#o.signal.reason;
    const open = this.#windows.filter((w) => !w.done);
    if (open.length > 0) {
      throw new Error(`listing incomplete: ${open.length} windows did not reach their end`);
    }
    const t = this.#tally;
    return {
      pages: t.pages,
      identities: t.identities,
      peakParallel: t.peak,
      windows: this.#windows.length,
      windowRetries: t.retries,
      duplicates: t.duplicates,
      createdAtMin: this.#times.minIso,
      createdAtMax: this.#times.maxIso,
    };
  }

  /** Every change of phase goes through here. */
  #on(event: ListingEvent): void {
    this.#state = nextListingState(this.#state, event);
  }

  #start(walker: Walker): void {
    this.#active += 1;
    this.#tally.peak = Math.max(this.#tally.peak, this.#active);
    void this.#limit(() => this.#walk(walker))
      .catch((err) => {
        this.#on({ kind: "failed", err });
        this.#stop.abort(err);
      })
      .finally(() => {
        this.#active -= 1;
        walker.finished = true;
        // Cursors start only from a running one (or `run`), so none starts after this.
        if (this.#active === 0) this.#drained();
      });
  }

  #walk(first: Walker): Promise<void> {
    return walkWithRetries(first, (walker) => this.#walkOnce(walker), {
      attempts: this.#o.windowAttempts ?? 3,
      retryBaseMs: this.#o.retryBaseMs,
      logger: this.#o.logger,
      signal: this.#signal,
      onRetry: () => {
        this.#tally.retries += 1;
      },
    });
  }

  /** Starts cursors while fewer run than the pace asks for and a window can be split. */
  #rebalance(): void {
    if (this.#state.phase === "stopping" || this.#signal.aborted) return;
    while (this.#active < this.#target()) {
      const walker = grow(
        this.#windows,
        density(this.#windows),
        2 * this.#pageSize,
        this.#openEstimate(),
      );
      if (!walker) return;
      this.#on({ kind: "split" });
      this.#start(walker);
    }
  }

  #target(): number {
    const o = this.#o;
    const { storeMs, stores } = this.#tally;
    return cursorTarget(this.#state, {
      latencyMs: o.latencyMs() ?? o.latencyHintMs ?? null,
      storeMs: stores > 0 ? storeMs / stores : 0,
      rate: o.rate(),
      maxParallel: o.maxParallel,
    });
  }

  #openEstimate(): number {
    const expected = this.#o.expectedItems;
    return expected == null
      ? Number.POSITIVE_INFINITY
      : Math.max(0, expected - this.#tally.identities);
  }

  async #walkOnce(walker: Walker): Promise<void> {
    const gen = this.#o.list({
      limit: this.#pageSize,
      order: walker.order,
      controlTypes: this.#o.controlTypes,
      createdAtGte: iso(walker.gte),
      createdAtLt: iso(walker.lt),
      signal: this.#signal,
    });
    let next = ask(gen);
    const askNext = () => {
      next = ask(gen);
    };
    try {
      for (;;) {
        const r = await next;
        // The window's own query is exhausted: everything in the window has been read.
        if (r.done) {
          walker.window.done = true;
          return;
        }
        if (!(await this.#take(walker, r.value, askNext))) return;
      }
    } finally {
      await gen.return(undefined).catch(() => {});
    }
  }

  /**
   * Takes one page: true when the walk goes on. Its own frame, so a stored page is garbage once
   * stored, not held while the next one travels (asked for with `askNext` before storing).
   */
  async #take(walker: Walker, page: Identity[], askNext: () => void): Promise<boolean> {
    this.#tally.pages += 1;
    walker.pages += 1;
    if (walker.window.done) return false;
    const ts = this.#times.of(page, (identity) => this.#noCreatedAt(identity));
    const { fresh, crossed, ...seen } = windowed(this.#state)
      ? acceptPage(walker, page, (i) => ts[i] as number)
      : { fresh: page, crossed: false, duplicates: 0 };
    this.#tally.duplicates += seen.duplicates;
    const more = !crossed && !walker.window.done && !this.#handsOver(walker);
    if (more) askNext();
    this.#tally.identities += fresh.length;
    await this.#store(fresh);
    this.#rebalance();
    return more;
  }

  /**
   * Storing overlaps the next page's request; when it takes longer than the request, it sets a
   * cursor's pace, so it counts in how many cursors keep the budget busy. Windows never share an
   * identity, so their pages are stored side by side without waiting on each other.
   */
  async #store(items: Identity[]): Promise<void> {
    if (items.length === 0) return;
    const t0 = performance.now();
    await this.#o.onPage(items);
    this.#tally.storeMs += performance.now() - t0;
    this.#tally.stores += 1;
  }

  /**
   * Two cursors about to meet would both ask for the last page between them: when less than a
   * page is left, this one stops and the other reads to the meeting point (decided synchronously,
   * so the two never both stop).
   */
  #handsOver(walker: Walker): boolean {
    const w = walker.window;
    const other = walker.order === "ASC" ? w.desc : w.asc;
    if (!other || other.finished) return false;
    if (remaining(w, density(this.#windows), Number.POSITIVE_INFINITY) >= this.#pageSize) {
      return false;
    }
    walker.finished = true;
    return true;
  }

  /** Without created_at the listing cannot be split: it stays one cursor, or fails if split. */
  #noCreatedAt(identity: Identity): void {
    if (cursorPlan(this.#state) === "split") {
      throw new PlatformError({
        kind: "protocol",
        classification: "fatal",
        endpoint: `GET ${IDENTITY_PATHS.identities}`,
        detail: `identity ${identity.id} has no readable created_at; a partitioned listing needs it (--listing-parallelism 1 reads one cursor)`,
      });
    }
    this.#on({ kind: "no_created_at" });
  }
}
