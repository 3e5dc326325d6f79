import { sleep } from "./backoff.ts";

export interface TokenBucketOptions {
  /** Sustained rate, tokens per second. */
  readonly rate: number;
  /** Largest number of requests that may go out back to back after an idle spell. */
  readonly burst: number;
  /**
   * Tokens available at creation. Defaults to 1 rather than `burst`: a run starts at the sustained
   * rate, so its first second never exceeds `rate + 1` even against a one-second window.
   */
  readonly initialTokens?: number;
  readonly now?: () => number;
}

/**
 * A token bucket written as GCRA (the "virtual scheduling" form): one number, the theoretical
 * arrival time, instead of a token count and a refill timer. Each caller *reserves* the next
 * free instant and sleeps until then, so waiters are served in order and never wake together.
 *
 * Guarantee: in any interval of length T, at most `burst + rate·T` reservations fall inside it.
 *
 * @example
 *   const bucket = new TokenBucket({ rate: 40, burst: 4 });
 *   await bucket.take(signal); // then send
 */
export class TokenBucket {
  #intervalMs: number;
  #toleranceMs: number;
  #tat: number;
  #rate: number;
  readonly #burst: number;
  readonly #now: () => number;

  constructor(options: TokenBucketOptions) {
    if (!(options.rate > 0)) throw new RangeError(`rate must be > 0, got ${options.rate}`);
    this.#now = options.now ?? Date.now;
    this.#burst = Math.max(1, Math.floor(options.burst));
    this.#rate = options.rate;
    this.#intervalMs = 1000 / options.rate;
    this.#toleranceMs = (this.#burst - 1) * this.#intervalMs;
    const initial = Math.min(this.#burst, Math.max(1, options.initialTokens ?? 1));
    // A full bucket has tat = now; each missing token pushes tat one interval later.
    this.#tat = this.#now() + (this.#burst - initial) * this.#intervalMs;
  }

  get rate(): number {
    return this.#rate;
  }

  get burst(): number {
    return this.#burst;
  }

  /** Claims the next free instant and returns how long to wait for it (0 = send now). */
  reserve(): number {
    const now = this.#now();
    const at = Math.max(now, this.#tat - this.#toleranceMs);
    this.#tat = Math.max(this.#tat, at) + this.#intervalMs;
    return at - now;
  }

  /** Waits for a reservation; rejects with the signal's reason if it aborts first. */
  async take(signal?: AbortSignal): Promise<void> {
    const wait = this.reserve();
    if (wait > 0) await sleep(wait, signal);
    else if (signal?.aborted) throw signal.reason;
  }

  /** Changes the sustained rate from now on; the burst (in tokens) stays. */
  setRate(rate: number): void {
    if (!(rate > 0)) throw new RangeError(`rate must be > 0, got ${rate}`);
    this.#rate = rate;
    this.#intervalMs = 1000 / rate;
    this.#toleranceMs = (this.#burst - 1) * this.#intervalMs;
  }

  /**
   * Grants nothing before `until`, and then only one token: resuming after a penalty at the
   * sustained rate, never with a burst.
   */
  pauseUntil(until: number): void {
    this.#tat = Math.max(this.#tat, until + this.#toleranceMs);
  }
}
