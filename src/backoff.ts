/**
 * The one backoff-with-jitter helper and the one sleep of the tool, shared by the platform client
 * (HTTP retries, 429 waits) and the database layer (lost connections).
 */

/** The longest delay a Node timer holds; a longer one fires after 1 ms with a warning. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface BackoffOptions {
  readonly baseMs: number;
  readonly capMs: number;
}

/**
 * Exponential backoff with full jitter: a uniform draw in [0, min(cap, base·2^(retry-1))].
 * Full jitter spreads clients that failed together, so they do not come back together
 * (see the AWS architecture note "Exponential Backoff And Jitter").
 *
 * @example
 *   backoffDelayMs(1, { baseMs: 250, capMs: 10_000 }) // somewhere in [0, 250]
 *   backoffDelayMs(4, { baseMs: 250, capMs: 10_000 }) // somewhere in [0, 2000]
 */
export function backoffDelayMs(
  retry: number,
  options: BackoffOptions,
  random: () => number = Math.random,
): number {
  const exp = Math.min(options.capMs, options.baseMs * 2 ** Math.max(0, retry - 1));
  return Math.floor(random() * exp);
}

/**
 * Resolves after `ms`, or rejects with the signal's reason as soon as it aborts (and then drops
 * its timer, so a cancelled run does not linger until the longest backoff ends). Waits longer
 * than a Node timer can hold are chained, never truncated: a timer never overflows.
 *
 * @example
 *   await sleep(500, AbortSignal.timeout(100)) // rejects after ~100 ms
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  if (!(ms > 0)) return Promise.resolve();
  const until = Date.now() + ms;
  return new Promise<void>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const arm = () => {
      const left = until - Date.now();
      if (left <= 0) {
        signal?.removeEventListener("abort", onAbort);
        resolve();
        return;
      }
      timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    arm();
  });
}
