import { sleep } from "../backoff.ts";
import type { Logger } from "../log.ts";
import { CAP_GUARD_MS, TokenBucket } from "./token-bucket.ts";

export interface RateBudgetOptions {
  /** Requests per second per endpoint (path template). */
  readonly rate: number;
  /** Defaults to {@link defaultBurst}. */
  readonly burst?: number;
  /** Pause after a 429 that carries no Retry-After. */
  readonly penaltyS: number;
  readonly logger: Logger;
  readonly now?: () => number;
}

/**
 * The burst we allow: a tenth of a second's worth, at least one request. The platform averages over
 * five minutes, so a burst of rate/10 adds at most 0.1 s worth of requests to any window (40 rps:
 * 12,004 requests per 5 minutes against the 15,000 allowed). It is still enough that workers which
 * wake together are not spaced out by artificial gaps. Buckets start with one token, so a burst
 * exists only after an idle spell, and the bucket's one-second cap keeps even that burst inside
 * `rate` requests per second.
 */
export function defaultBurst(rate: number): number {
  return Math.max(1, Math.floor(rate / 10));
}

/** What one writer process hands the next through the journal, and how the next takes it. */
export type WriterHandover = Pick<RateBudget, "holdUntil" | "recentSends" | "addSends">;

export interface EndpointBudgetState {
  readonly rate: number;
  readonly burst: number;
  readonly penalties: number;
  /** ISO time until which nothing is sent, or null when open. */
  readonly pausedUntil: string | null;
}

interface EndpointBudget {
  readonly bucket: TokenBucket;
  pausedUntil: number;
  penalties: number;
}

/**
 * One token bucket per endpoint path template (the platform limits per path, not per method), plus
 * the 429 penalty: after a 429 nothing more goes to that endpoint until Retry-After (or `penaltyS`)
 * has passed, no probing, and its rate is halved for the rest of the run. Other endpoints go on.
 *
 * What the platform can observe in a window of W seconds is at most `rate·W + concurrency`: the
 * sends are budgeted, but requests in flight during a server stall land together. Against 50 rps
 * over 300 s with the default 40 rps that leaves room for 3,000, so concurrency never matters there.
 *
 * @example
 *   const budget = new RateBudget({ rate: 40, penaltyS: 300, logger });
 *   await budget.waitOpen("/v2/identity/controls", signal);
 *   if (await budget.take("/v2/identity/controls", signal)) send();
 */
export class RateBudget {
  readonly #endpoints = new Map<string, EndpointBudget>();
  readonly #options: RateBudgetOptions;
  readonly #now: () => number;
  #heldUntil = 0;

  constructor(options: RateBudgetOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  #get(key: string): EndpointBudget {
    let ep = this.#endpoints.get(key);
    if (!ep) {
      const rate = this.#options.rate;
      ep = {
        bucket: new TokenBucket({
          rate,
          burst: this.#options.burst ?? defaultBurst(rate),
          now: this.#now,
          trackSends: true,
        }),
        pausedUntil: 0,
        penalties: 0,
      };
      this.#endpoints.set(key, ep);
    }
    return ep;
  }

  /** Resolves once `key` is not under a penalty (at once if it never was). */
  async waitOpen(key: string, signal?: AbortSignal): Promise<void> {
    const ep = this.#get(key);
    // A penalty can be extended while we sleep, hence the loop.
    for (let left = ep.pausedUntil - this.#now(); left > 0; left = ep.pausedUntil - this.#now()) {
      await sleep(left, signal);
    }
  }

  /**
   * Waits for the endpoint's next send slot. Returns false when a penalty began meanwhile: the
   * caller must go back to {@link waitOpen} (and give up any concurrency slot while it waits).
   */
  async take(key: string, signal?: AbortSignal): Promise<boolean> {
    const ep = this.#get(key);
    const held = this.#heldUntil - this.#now();
    if (held > 0) await sleep(held, signal);
    if (ep.pausedUntil > this.#now()) return false;
    const granted = await ep.bucket.take(signal);
    return granted && ep.pausedUntil <= this.#now();
  }

  /**
   * Sends nothing to any endpoint before `at` (epoch ms). A writer that takes over from another
   * process which may have sent within the last second waits that second out, so that no one-second
   * window at the platform holds the sends of both: each process keeps its own cap.
   */
  holdUntil(at: number): void {
    this.#heldUntil = Math.max(this.#heldUntil, at);
  }

  /**
   * Per endpoint, the sends of the last second (and the cap's guard) before `now`, epoch ms: what
   * a process that ends hands to the next writer, whose cap must count them.
   */
  recentSends(now = this.#now()): Record<string, number[]> {
    const out: Record<string, number[]> = {};
    for (const [key, ep] of this.#endpoints) {
      const times = ep.bucket.sendsSince(now - 1000 - CAP_GUARD_MS);
      if (times.length > 0) out[key] = times;
    }
    return out;
  }

  /** Counts another process's last sends (from {@link recentSends}) in each endpoint's cap. */
  addSends(sends: Readonly<Record<string, readonly number[]>>): void {
    for (const [key, times] of Object.entries(sends)) this.#get(key).bucket.addSends(times);
  }

  /**
   * Records that a request granted by {@link take} went out (or was given up): the one-second cap
   * counts it from this moment, not from its grant. Call exactly once per grant.
   */
  sent(key: string): void {
    this.#get(key).bucket.sent();
  }

  /**
   * Sets the sustained rate of `key` from now on: an operator's `set-rate` on a running run. It
   * replaces whatever a 429 halved the rate to; a running penalty still holds until it ends.
   *
   * @example
   *   budget.setRate("/v2/identity/controls", 5);
   */
  setRate(key: string, rate: number): void {
    this.#get(key).bucket.setRate(rate);
  }

  /**
   * Records a 429. Returns true when this opened a new penalty (and so logged the warning); 429s
   * of requests that were already in flight merge into the running penalty silently.
   */
  penalise(key: string, retryAfterS: number | undefined): boolean {
    const ep = this.#get(key);
    const now = this.#now();
    const seconds = retryAfterS ?? this.#options.penaltyS;
    const until = now + seconds * 1000;
    const running = ep.pausedUntil > now;
    if (until > ep.pausedUntil) ep.pausedUntil = until;
    const before = ep.bucket.rate;
    const after = Math.max(Math.min(1, before), before * 0.5);
    // Rate first: the pause is expressed in the new rate's tolerance.
    if (!running) ep.bucket.setRate(after);
    ep.bucket.pauseUntil(ep.pausedUntil);
    if (running) return false;
    ep.penalties += 1;
    this.#options.logger.warn(
      `Rate limited (429) on ${key}: sending nothing more to it until ${new Date(ep.pausedUntil).toISOString()} ` +
        `(${retryAfterS === undefined ? `no Retry-After, using --penalty-s ${seconds}` : `Retry-After ${seconds} s`}); ` +
        `${budgetChange(before, after)} Other endpoints continue.`,
      { endpoint: key, resume_at: new Date(ep.pausedUntil).toISOString() },
    );
    return true;
  }

  /** Plain, JSON-serialisable view for metrics. */
  snapshot(): Record<string, EndpointBudgetState> {
    const now = this.#now();
    const out: Record<string, EndpointBudgetState> = {};
    for (const [key, ep] of this.#endpoints) {
      out[key] = {
        rate: round(ep.bucket.rate),
        burst: ep.bucket.burst,
        penalties: ep.penalties,
        pausedUntil: ep.pausedUntil > now ? new Date(ep.pausedUntil).toISOString() : null,
      };
    }
    return out;
  }
}

const round = (n: number) => Math.round(n * 100) / 100;

/**
 * What a penalty did to the endpoint's rate, truthfully: halved, or left at its floor of 1 request/s
 * (or at a lower rate the operator chose).
 *
 * @example
 *   budgetChange(40, 20) // "its budget drops from 40 to 20 requests/s for the rest of the run."
 *   budgetChange(1, 1) // "its budget stays at 1 request/s, the lowest a penalty sets."
 */
export function budgetChange(before: number, after: number): string {
  if (after < before)
    return `its budget drops from ${round(before)} to ${round(after)} requests/s for the rest of the run.`;
  const unit = round(after) === 1 ? "request/s" : "requests/s";
  return `its budget stays at ${round(after)} ${unit}, the lowest a penalty sets.`;
}
