/**
 * The suite's one way to wait for a state: poll a condition until it holds. The timeout is a
 * failure bound (a test that would otherwise hang fails, naming what it waited for), never a claim
 * about speed: no test asserts how fast something happened on the wall clock.
 */
import { setTimeout as sleep } from "node:timers/promises";

/** How long to keep polling, and how often. */
export interface WaitOptions {
  /** Give up after this long (default five minutes: a loaded machine is slow, not stuck). */
  readonly timeoutMs?: number;
  /** Pause between polls (default 10 ms). */
  readonly intervalMs?: number;
}

/** Polls `cond` until it holds; true when it did, false when `timeoutMs` passed first. */
export async function reaches(
  cond: () => boolean | Promise<boolean>,
  { timeoutMs = 300_000, intervalMs = 10 }: WaitOptions = {},
): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) return false;
    await sleep(intervalMs);
  }
  return true;
}

/**
 * Polls `cond` until it holds, and fails the test naming `what` when `timeoutMs` passes first.
 *
 * @example await waitFor("5 creates", () => sandbox.stats().writes.creates >= 5);
 */
export async function waitFor(
  what: string,
  cond: () => boolean | Promise<boolean>,
  options: WaitOptions = {},
): Promise<void> {
  if (!(await reaches(cond, options))) {
    throw new Error(`timed out after ${options.timeoutMs ?? 300_000} ms waiting for ${what}`);
  }
}
