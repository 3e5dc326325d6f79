/**
 * The run's patience with one endpoint: how long it may go on refusing (429s and 5xx, with no
 * success between) before the run stops. `--max-wait-s` bounds one wait; this bounds them all, so
 * a platform that answers 429 forever (with or without Retry-After) stops the run cleanly after
 * `--max-refused-s`, resumable, with a message that says what it answered and for how long.
 */
import { PlatformError } from "./platform-error.ts";

export interface RefusalPatienceOptions {
  /** `--max-refused-s`: the longest continuous refusal from one endpoint the run sits through. */
  readonly limitS: number;
  /** Stops the whole client with this error. */
  readonly halt: (error: PlatformError) => void;
  /** The client's lifetime signal: its end drops every timer. */
  readonly signal: AbortSignal;
  readonly now?: () => number;
}

interface Streak {
  readonly since: number;
  readonly statuses: Map<string, number>;
  last: string;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Tracks refusal streaks per endpoint (`METHOD /template`). A streak starts at its first refusal;
 * a success ends it. When a streak reaches the limit while a request to the endpoint is still
 * waiting on it, the client is halted at once (a timer, so a long penalty wait is cut short); an
 * endpoint nobody waits on is judged at its next refusal.
 *
 * @example
 *   const patience = new RefusalPatience({ limitS: 1800, halt, signal });
 *   patience.begin(key); try { ...; patience.refused(key, 429, "-5"); ... } finally { patience.end(key); }
 */
export class RefusalPatience {
  readonly #o: RefusalPatienceOptions;
  readonly #now: () => number;
  readonly #streaks = new Map<string, Streak>();
  readonly #waiting = new Map<string, number>();

  constructor(options: RefusalPatienceOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    options.signal.addEventListener("abort", () => this.#dropTimers(), { once: true });
  }

  /** A request to `key` starts (it may wait through refusals). Pair with {@link end}. */
  begin(key: string): void {
    this.#waiting.set(key, (this.#waiting.get(key) ?? 0) + 1);
  }

  end(key: string): void {
    const n = (this.#waiting.get(key) ?? 1) - 1;
    if (n > 0) this.#waiting.set(key, n);
    else this.#waiting.delete(key);
  }

  /** The endpoint answered: its streak, if any, is over. */
  succeeded(key: string): void {
    const streak = this.#streaks.get(key);
    if (!streak) return;
    clearTimeout(streak.timer);
    this.#streaks.delete(key);
  }

  /**
   * The endpoint refused (429 or 5xx). `retryAfter` is the header as given, for the message.
   * Halts at once when the streak is already past the limit.
   */
  refused(key: string, status: number, retryAfter: string | null = null): void {
    if (this.#o.signal.aborted) return;
    const now = this.#now();
    let streak = this.#streaks.get(key);
    if (!streak) {
      streak = { since: now, statuses: new Map(), last: "", timer: undefined };
      this.#streaks.set(key, streak);
      const s = streak;
      s.timer = setTimeout(() => this.#deadline(key, s), this.#o.limitS * 1000);
      s.timer.unref();
    }
    streak.statuses.set(String(status), (streak.statuses.get(String(status)) ?? 0) + 1);
    streak.last =
      retryAfter === null
        ? `${status} with no Retry-After`
        : `${status} with Retry-After ${JSON.stringify(retryAfter.slice(0, 40))}`;
    if (now - streak.since >= this.#o.limitS * 1000) this.#o.halt(this.#error(key, streak));
  }

  #deadline(key: string, streak: Streak): void {
    streak.timer = undefined;
    if (this.#streaks.get(key) !== streak || this.#o.signal.aborted) return;
    if ((this.#waiting.get(key) ?? 0) > 0) this.#o.halt(this.#error(key, streak));
  }

  #error(key: string, streak: Streak): PlatformError {
    const seconds = Math.round((this.#now() - streak.since) / 1000);
    const counts = [...streak.statuses].map(([status, n]) => `${n} × ${status}`).join(", ");
    const only429 = streak.statuses.size === 1 && streak.statuses.has("429");
    return new PlatformError({
      kind: only429 ? "rate_limited" : "server",
      classification: "fatal",
      endpoint: key,
      detail: `the platform refused every request for ${seconds} s since ${new Date(streak.since).toISOString()} (${counts}; the last: ${streak.last}), with no success between: that reaches --max-refused-s ${this.#o.limitS}, so the run stops here instead of waiting on. Run it again later (a resume continues where it stopped), or raise --max-refused-s.`,
    });
  }

  #dropTimers(): void {
    for (const streak of this.#streaks.values()) clearTimeout(streak.timer);
  }
}
