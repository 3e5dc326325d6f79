import { MAX_TIMER_MS } from "../backoff.ts";

type OnAbort = (reason: unknown) => void;

/**
 * The links made from each parent signal. A parent gets ONE 'abort' listener, however many links
 * wait on it: the run's signal is shared by every request of a run, and thousands of queued
 * requests each adding a listener of their own is what tripped Node's MaxListenersExceededWarning.
 */
const linksOf = new WeakMap<AbortSignal, Set<OnAbort>>();

function follow(parent: AbortSignal, onAbort: OnAbort): () => void {
  let links = linksOf.get(parent);
  if (!links) {
    const fresh = new Set<OnAbort>();
    links = fresh;
    linksOf.set(parent, fresh);
    parent.addEventListener(
      "abort",
      () => {
        linksOf.delete(parent);
        for (const link of [...fresh]) link(parent.reason);
      },
      { once: true },
    );
  }
  const set = links;
  set.add(onAbort);
  return () => set.delete(onAbort);
}

/**
 * An AbortSignal that aborts when any parent aborts or when an optional timeout passes, and tells
 * which of the two happened. Used instead of `AbortSignal.any([parent, AbortSignal.timeout(ms)])`
 * because on Node 20 every `AbortSignal.any` leaves a record on its long-lived parent (about 60
 * bytes per call that GC never reclaims: some 60 MB over a million requests), while this one
 * unsubscribes and clears its timer in `dispose()`. A parent carries one listener in all, not one
 * per link.
 *
 * @example
 *   const link = new LinkedSignal([runSignal], 30_000);
 *   try { await fetch(url, { signal: link.signal }); }
 *   catch { if (link.timedOut) ...; }
 *   finally { link.dispose(); }
 */
export class LinkedSignal {
  readonly #controller = new AbortController();
  readonly #unfollow: (() => void)[] = [];
  #timer: NodeJS.Timeout | undefined;
  #timedOut = false;
  #cancelled = false;

  constructor(parents: readonly (AbortSignal | undefined)[], timeoutMs?: number) {
    for (const p of parents) {
      if (!p) continue;
      if (p.aborted) {
        this.#cancelled = true;
        this.#controller.abort(p.reason);
        return;
      }
      this.#unfollow.push(follow(p, this.#onParentAbort));
    }
    if (timeoutMs !== undefined) {
      this.#timer = setTimeout(
        () => {
          this.#timedOut = true;
          this.#controller.abort(
            new DOMException(`timed out after ${timeoutMs} ms`, "TimeoutError"),
          );
        },
        Math.min(timeoutMs, MAX_TIMER_MS),
      );
    }
  }

  readonly #onParentAbort = (reason: unknown) => {
    if (this.#controller.signal.aborted) return;
    this.#cancelled = true;
    this.#controller.abort(reason);
  };

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** True when the timeout fired first. */
  get timedOut(): boolean {
    return this.#timedOut;
  }

  /** True when a parent aborted first. */
  get cancelled(): boolean {
    return this.#cancelled;
  }

  dispose(): void {
    if (this.#timer) clearTimeout(this.#timer);
    for (const unfollow of this.#unfollow) unfollow();
    this.#unfollow.length = 0;
  }
}
