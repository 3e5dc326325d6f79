/**
 * The gate every platform write of a run passes: closed while something holds the writes (a
 * `pause`, the throttle file, the time window), and narrow enough that closing it takes effect
 * quickly. Pure in-process state; `run-control.ts` opens and closes it.
 */
import pLimit, { type LimitFunction } from "p-limit";

/**
 * At most this many seconds' worth of writes, at the current write rate, are under way at once.
 * Each waits for its rate token, so a pause takes effect within this time plus one poll: at
 * `set-rate 2` with `--concurrency 8`, eight writes past the gate would keep sending for 4 s.
 */
const ADMITTED_SECONDS = 1;

/**
 * @example
 *   const gate = new WriteGate(8, 40);
 *   await gate.admit(() => sendOneAction(), signal); // waits while held
 *   gate.hold("pause", "paused by ana@ops1"); gate.release("pause");
 */
export class WriteGate {
  /** What holds the writes: a key ("pause", "throttle", "window") → the words shown. */
  readonly #holds = new Map<string, string>();
  readonly #limit: LimitFunction;
  readonly #concurrency: number;
  /** Settles when the last hold is released; undefined while nothing holds. */
  #opened: { promise: Promise<void>; resolve: () => void } | undefined;
  #rate = 0;

  constructor(concurrency: number, rate: number) {
    this.#concurrency = Math.max(1, concurrency);
    this.#limit = pLimit(this.#concurrency);
    this.setRate(rate);
  }

  /** The write rate changed: fewer writes are admitted at a low rate, so a pause stays quick. */
  setRate(rate: number): void {
    this.#rate = rate;
    const wanted = Math.ceil(rate * ADMITTED_SECONDS);
    this.#limit.concurrency = Math.min(this.#concurrency, Math.max(1, wanted));
  }

  /** The write budget in force, requests/s. */
  get rate(): number {
    return this.#rate;
  }

  get isOpen(): boolean {
    return this.#holds.size === 0;
  }

  /** What holds the writes now, in words, in the order the holds began. */
  get holds(): string[] {
    return [...this.#holds.values()];
  }

  /** Whether `key` holds the writes. */
  has(key: string): boolean {
    return this.#holds.has(key);
  }

  /** Holds the writes for `key` (again: only its words change). */
  hold(key: string, words: string): void {
    if (this.#holds.size === 0) {
      let resolve = () => {};
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      this.#opened = { promise, resolve };
    }
    this.#holds.set(key, words);
  }

  release(key: string): void {
    if (!this.#holds.delete(key) || this.#holds.size > 0) return;
    this.#opened?.resolve();
    this.#opened = undefined;
  }

  /**
   * Resolves once nothing holds the writes: `"open"` (at once if nothing did), or `"aborted"` if
   * `signal` aborted first. `waited` says whether it had to wait, so that a write prepared before
   * the hold (a delete's re-read) can be prepared again.
   */
  async whenOpen(signal?: AbortSignal): Promise<{ state: "open" | "aborted"; waited: boolean }> {
    let waited = false;
    while (this.#opened) {
      if (signal?.aborted) return { state: "aborted", waited };
      waited = true;
      const opened = this.#opened.promise;
      await new Promise<void>((resolve) => {
        const onAbort = () => resolve();
        signal?.addEventListener("abort", onAbort, { once: true });
        void opened.then(() => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        });
      });
    }
    return { state: signal?.aborted ? "aborted" : "open", waited };
  }

  /**
   * Runs `work` once the gate is open and one of the admitted places is free. Resolves undefined,
   * without running `work`, when `signal` aborts while waiting.
   */
  admit<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T | undefined> {
    return this.#limit(async () => {
      if ((await this.whenOpen(signal)).state === "aborted") return undefined;
      return work();
    });
  }
}
