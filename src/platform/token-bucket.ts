import { MAX_TIMER_MS } from "../backoff.ts";

/** Timer lateness up to this is jitter and is caught up; beyond it, the loop was stalled. */
const STALL_MS = 20;
/**
 * The one-second cap's window is this much longer than a second: two requests sent a second
 * apart may arrive closer together (loopback and event-loop jitter), and the platform counts
 * arrivals. 20 ms of margin costs 2% of throughput where the cap binds, and keeps ⌊rate⌋ in any
 * second as the platform sees it unless one request is delayed by more than that.
 */
export const CAP_GUARD_MS = 20;

export interface TokenBucketOptions {
  /** Sustained rate, tokens per second. */
  readonly rate: number;
  /** Largest number of requests that may go out back to back after an idle spell. */
  readonly burst: number;
  /**
   * Tokens available at creation. Defaults to 1 rather than `burst`: a run starts at the sustained
   * rate instead of with a burst on top of it.
   */
  readonly initialTokens?: number;
  /**
   * Count each grant in the one-second cap from its real send, reported by {@link TokenBucket.sent},
   * not from the grant: a grant not yet reported holds its place in the cap.
   */
  readonly trackSends?: boolean;
  readonly now?: () => number;
}

interface Waiter {
  readonly resolve: (granted: boolean) => void;
  readonly reject: (reason: unknown) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
}

/**
 * A token bucket decided at the moment of sending, plus a one-second cap.
 *
 * The bucket is GCRA (one number, the theoretical arrival time): at most `burst + rate·T`
 * grants in any interval T. Grants are decided when they happen, not reserved ahead, so an event
 * loop stall cannot pile up overdue reservations that then all go out together. The cap keeps at
 * most ⌊rate⌋ grants in any sliding second, so even a catch-up burst after a stall or an idle spell
 * never lifts a one-second average above the rate (the window is a second plus {@link CAP_GUARD_MS}): the platform averages over five minutes, but
 * the budget then holds for any window of a second or more.
 *
 * Waiters are served first come, first served by a single timer.
 *
 * Two guards keep the budget exact when the event loop stalls. With `trackSends`, the cap counts
 * each request from the moment it really went out ({@link sent}), so requests granted before a
 * stall and sent after it are counted where the platform sees them. And a timer that fires late
 * does not catch up: the tokens that fell due while the loop was blocked are forfeited (beyond a
 * few milliseconds of timer jitter), and pacing goes on from where it was.
 *
 * @example
 *   const bucket = new TokenBucket({ rate: 40, burst: 4 });
 *   if (await bucket.take(signal)) send(); // false: interrupted by a penalty, go wait
 */
export class TokenBucket {
  #intervalMs: number;
  #toleranceMs: number;
  #tat: number;
  #rate: number;
  #pausedUntil = 0;
  /** Times of the last ⌊rate⌋ grants (a ring), for the one-second cap. */
  #recent: number[];
  #recentHead = 0;
  readonly #trackSends: boolean;
  /** When the timer was due to fire, for telling a stall from timer jitter. */
  #dueAt = 0;
  readonly #burst: number;
  readonly #now: () => number;
  readonly #queue: Waiter[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(options: TokenBucketOptions) {
    if (!(options.rate > 0)) throw new RangeError(`rate must be > 0, got ${options.rate}`);
    this.#now = options.now ?? Date.now;
    this.#trackSends = options.trackSends ?? false;
    this.#burst = Math.max(1, Math.floor(options.burst));
    this.#rate = options.rate;
    this.#intervalMs = 1000 / options.rate;
    this.#toleranceMs = (this.#burst - 1) * this.#intervalMs;
    this.#recent = new Array(Math.max(1, Math.floor(options.rate))).fill(-Infinity);
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

  /** The earliest instant a grant is possible (≤ now means at once). */
  nextAt(): number {
    const oldest = this.#recent[this.#recentHead] as number;
    return Math.max(this.#tat - this.#toleranceMs, this.#pausedUntil, oldest + 1000 + CAP_GUARD_MS);
  }

  /** Grants a token now if one is due; never waits. */
  tryTake(): boolean {
    const now = this.#now();
    if (now < this.nextAt()) return false;
    this.#tat = Math.max(this.#tat, now) + this.#intervalMs;
    // An unsent grant is "not yet in the past": it keeps its place until sent() dates it.
    this.#recent[this.#recentHead] = this.#trackSends ? Number.POSITIVE_INFINITY : now;
    this.#recentHead = (this.#recentHead + 1) % this.#recent.length;
    return true;
  }

  /**
   * Waits for a token, in arrival order. Resolves false if {@link pauseUntil} interrupts the wait;
   * rejects with the signal's reason if it aborts first.
   */
  take(signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#queue.length === 0 && this.tryTake()) return Promise.resolve(true);
    return new Promise<boolean>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const i = this.#queue.indexOf(waiter);
          if (i >= 0) this.#queue.splice(i, 1);
          reject(signal?.reason);
          this.#schedule();
        },
      };
      signal?.addEventListener("abort", waiter.onAbort, { once: true });
      this.#queue.push(waiter);
      this.#schedule();
    });
  }

  /**
   * With `trackSends`: the oldest grant not yet reported went out now (or was given up). Sends
   * are matched to grants in order; which request it was does not matter to the count.
   */
  sent(): void {
    if (!this.#trackSends) return;
    const n = this.#recent.length;
    for (let k = 0; k < n; k++) {
      const i = (this.#recentHead + k) % n;
      if (this.#recent[i] === Number.POSITIVE_INFINITY) {
        this.#recent[i] = this.#now();
        // The head may just have become datable: a waiter's timer may be due sooner.
        if (k === 0) this.#schedule();
        return;
      }
    }
  }

  /** The times of the sends this bucket counts that happened after `since` (epoch ms), oldest first. */
  sendsSince(since: number): number[] {
    return this.#ordered().filter((t) => t > since && Number.isFinite(t));
  }

  /**
   * Counts `times` (epoch ms) as sends of this bucket: another process's last sends, which the
   * one-second cap must count as if they were this one's.
   */
  addSends(times: readonly number[]): void {
    const size = this.#recent.length;
    const merged = [...this.#ordered(), ...times].sort((a, b) => a - b).slice(-size);
    this.#recent = [...new Array(size - merged.length).fill(-Infinity), ...merged];
    this.#recentHead = 0;
    this.#schedule();
  }

  /** The ring's entries, oldest first. */
  #ordered(): number[] {
    return [...this.#recent.slice(this.#recentHead), ...this.#recent.slice(0, this.#recentHead)];
  }

  /** Changes the sustained rate from now on; the burst (in tokens) stays. */
  setRate(rate: number): void {
    if (!(rate > 0)) throw new RangeError(`rate must be > 0, got ${rate}`);
    this.#rate = rate;
    this.#intervalMs = 1000 / rate;
    this.#toleranceMs = (this.#burst - 1) * this.#intervalMs;
    const size = Math.max(1, Math.floor(rate));
    if (size !== this.#recent.length) {
      // Keep the most recent grants, newest last, so the cap stays honest across the change.
      const kept = this.#ordered().slice(-size);
      this.#recent = [...new Array(size - kept.length).fill(-Infinity), ...kept];
      this.#recentHead = 0;
    }
  }

  /**
   * Grants nothing before `until`, and then one token at a time (no burst). Current waiters are
   * released with `false` so they can give back whatever they hold while the pause lasts.
   */
  pauseUntil(until: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, until);
    this.#tat = Math.max(this.#tat, this.#pausedUntil + this.#toleranceMs);
    for (const w of this.#queue.splice(0)) {
      w.signal?.removeEventListener("abort", w.onAbort);
      w.resolve(false);
    }
    this.#schedule();
  }

  #schedule(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#queue.length === 0) return;
    const now = this.#now();
    const wait = Math.max(0, this.nextAt() - now);
    this.#dueAt = now + wait;
    // A far pause (a huge Retry-After) is waited in timer-sized steps: #pump re-arms until due.
    this.#timer = setTimeout(() => this.#pump(), Math.min(Math.ceil(wait), MAX_TIMER_MS));
  }

  #pump(): void {
    this.#timer = undefined;
    // Waiters were queued, so the bucket was busy, not idle: no burst is owed. A timer late by
    // a few milliseconds catches up (else jitter would shave the rate); a stall does not.
    const late = this.#now() - this.#dueAt;
    if (late > STALL_MS) {
      this.#tat = Math.max(this.#tat, this.#dueAt + late - STALL_MS + this.#toleranceMs);
    }
    while (this.#queue.length > 0 && this.tryTake()) {
      const w = this.#queue.shift() as Waiter;
      w.signal?.removeEventListener("abort", w.onAbort);
      w.resolve(true);
    }
    this.#schedule();
  }
}
