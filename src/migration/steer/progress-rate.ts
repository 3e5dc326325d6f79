/**
 * The rate a progress line shows: what was done over the last few seconds (not since the phase
 * began, which a first burst inflates and a `set-rate` moves only slowly), never above the budget
 * in force, so the figure is one the platform could have measured.
 */
import type { PlatformClient } from "../../platform/index.ts";

/**
 * A read phase's rate cap: the budget in force on the endpoint its reads go to, one request an
 * identity (per-identity's controls, the reads by id), read at each refresh.
 *
 * @example
 *   progress.start("platform", null, { rateCap: endpointBudget(client, PATHS.controls) });
 */
export const endpointBudget =
  (client: Pick<PlatformClient, "metrics">, template: string) => (): number | null =>
    client.metrics().budgets[template]?.rate ?? null;

/**
 * How far back the shown rate looks, in the progress line and in `status` alike (the running
 * process's report): the last 10 s of sends, long enough to smooth a burst, short enough for a
 * `set-rate` to show within seconds.
 */
export const RATE_WINDOW_MS = 10_000;
const BUCKET_MS = 250;

/**
 * The write rate shown, by `status` and by the progress line alike: the measured one, never above
 * the budget in force. A measured average runs ahead of a budget just lowered (`set-rate`, a 429's
 * halving) or after a burst (a pause's end), and no more can be sent than the budget allows from
 * now on. A budget of 0 or less (none known) caps nothing.
 *
 * @example
 *   shownRate(49, 40); // 40
 *   shownRate(12.3, 40); // 12.3
 */
export function shownRate(measured: number, budget: number): number {
  const rate = Math.max(0, measured);
  return budget > 0 ? Math.min(rate, budget) : rate;
}

/**
 * Counts ticks in 250 ms buckets over the last {@link RATE_WINDOW_MS}.
 *
 * @example
 *   const m = new RateMeter(Date.now()); m.add(3, Date.now()); m.perSecond(Date.now(), 40);
 */
export class RateMeter {
  readonly #buckets = new Map<number, number>();
  readonly #startedMs: number;

  constructor(startedMs: number) {
    this.#startedMs = startedMs;
  }

  add(n: number, nowMs: number): void {
    const b = Math.floor(nowMs / BUCKET_MS);
    this.#buckets.set(b, (this.#buckets.get(b) ?? 0) + n);
    const oldest = b - RATE_WINDOW_MS / BUCKET_MS;
    for (const k of this.#buckets.keys()) if (k <= oldest) this.#buckets.delete(k);
  }

  /**
   * Ticks per second over the window (or since the start, when younger), capped by
   * {@link shownRate} at `cap`, the budget in force, when the phase has one.
   */
  perSecond(nowMs: number, cap: number | null = null): number {
    const from = Math.max(this.#startedMs, nowMs - RATE_WINDOW_MS);
    const oldest = Math.floor(from / BUCKET_MS);
    let n = 0;
    for (const [k, v] of this.#buckets) if (k >= oldest) n += v;
    const rate = n / Math.max(1, (nowMs - from) / 1000);
    return shownRate(rate, cap ?? 0);
  }
}

/**
 * `done/total (pct%)`, with a total that grows to `done` when the estimate was low, so the
 * percentage never passes 100.
 *
 * @example
 *   progressCount(205, 185) // "205/205 (100.0%)"
 */
export function progressCount(done: number, total: number | null): string {
  if (!total) return String(done);
  const of = Math.max(total, done);
  return `${done}/${of} (${((100 * done) / Math.max(1, of)).toFixed(1)}%)`;
}
