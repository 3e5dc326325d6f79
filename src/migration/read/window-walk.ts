/**
 * How one cursor of a partitioned listing walks its window: each page is asked for ahead of time
 * (observed at once, so a failure waiting for the walk is no unhandled rejection), and a window
 * whose request still fails after the client's retries is restarted alone, with backoff, from what
 * it had covered, a few times at most. `partitioned-listing.ts` runs the walkers side by side.
 */
import type { Logger } from "../../log.ts";
import { backoffDelayMs, type Identity, PlatformError, sleep } from "../../platform/index.ts";
import { replaceWalker, type Walker } from "./listing-windows.ts";

export const iso = (ms: number) => (Number.isFinite(ms) ? new Date(ms).toISOString() : undefined);

const retryable = (err: unknown) =>
  err instanceof PlatformError && err.classification === "retryable";

/**
 * Asks for a cursor's next page. The page travels while the one before it is stored, so its
 * failure may come before anyone awaits it: observed at once, it is not an unhandled rejection
 * (which would kill the process) but the rejection the walk meets when it awaits the page.
 */
export const ask = (gen: AsyncGenerator<Identity[]>) => {
  const page = gen.next();
  page.catch(() => {});
  return page;
};

/** What restarting a failed window needs. */
export interface WindowRetry {
  /** Attempts per window after the client's own retries gave up. */
  readonly attempts: number;
  readonly retryBaseMs?: number;
  readonly logger?: Logger;
  readonly signal: AbortSignal;
  /** Counts a window restarted alone. */
  readonly onRetry: () => void;
}

/** Walks a window with `walkOnce`, restarting it alone after a retryable failure. */
export async function walkWithRetries(
  first: Walker,
  walkOnce: (walker: Walker) => Promise<void>,
  r: WindowRetry,
): Promise<void> {
  let walker = first;
  let failures = 0;
  for (;;) {
    const before = walker.pages;
    try {
      await walkOnce(walker);
      return;
    } catch (err) {
      if (!retryable(err) || r.signal.aborted) throw err;
      failures = walker.pages > before ? 1 : failures + 1;
      if (failures >= r.attempts) throw err;
      const from = walker.order === "ASC" ? walker.window.ascPos : walker.window.descPos;
      r.logger?.warn(
        `Listing window ${iso(walker.window.lo) ?? "start"} … ${iso(walker.window.hi) ?? "end"} failed (${(err as Error).message}); reading it again alone, ${walker.order} from ${iso(from) ?? "its end"} (attempt ${failures + 1} of ${r.attempts})`,
      );
      await sleep(
        backoffDelayMs(failures, { baseMs: r.retryBaseMs ?? 250, capMs: 10_000 }),
        r.signal,
      );
      if (walker.window.done) return;
      walker = replaceWalker(walker);
      r.onRetry();
    }
  }
}
