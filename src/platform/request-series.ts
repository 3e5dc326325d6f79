/**
 * What the client sent, second by second: the timeline of report.html. Counted when a counter of
 * `client-metrics.ts` moves, so the series and the totals can never disagree.
 */

/** The counters the series follows, in the order they are stored. */
export const SERIES_COUNTERS = ["requests", "rateLimited", "retries", "ambiguous"] as const;
export type SeriesCounter = (typeof SERIES_COUNTERS)[number];

/** One second of the run: what happened in `[at, at + 1 s)`. */
export interface RequestSecond {
  /** Unix time in whole seconds. */
  readonly at: number;
  /** HTTP exchanges sent (each retry and replay counts). */
  readonly requests: number;
  /** Answers 429. */
  readonly rateLimited: number;
  /** Sends repeated after a retryable or ambiguous failure. */
  readonly retries: number;
  /** Exchanges whose outcome was unknown (timeout, dropped connection, 5xx on a write). */
  readonly ambiguous: number;
}

/**
 * Per-second counts in memory: one small array per second in which something happened (a day of
 * traffic is 86,400 entries at most).
 *
 * @example
 *   const s = new RequestSeries(); s.add("requests", 1); s.snapshot()[0].requests // 1
 */
export class RequestSeries {
  readonly #seconds = new Map<number, Uint32Array>();
  readonly #clock: () => number;

  /** `clock` gives milliseconds since the epoch (Date.now by default; tests pass their own). */
  constructor(clock: () => number = Date.now) {
    this.#clock = clock;
  }

  add(counter: SeriesCounter, n: number): void {
    if (n <= 0) return;
    const at = Math.floor(this.#clock() / 1000);
    let counts = this.#seconds.get(at);
    if (!counts) {
      counts = new Uint32Array(SERIES_COUNTERS.length);
      this.#seconds.set(at, counts);
    }
    const i = SERIES_COUNTERS.indexOf(counter);
    counts[i] = (counts[i] ?? 0) + n;
  }

  /** Every second with activity, oldest first. */
  snapshot(): RequestSecond[] {
    return [...this.#seconds.entries()]
      .sort(([a], [b]) => a - b)
      .map(([at, c]) => ({
        at,
        requests: c[0] ?? 0,
        rateLimited: c[1] ?? 0,
        retries: c[2] ?? 0,
        ambiguous: c[3] ?? 0,
      }));
  }
}
