/**
 * An AbortSignal that aborts when any parent aborts or when an optional timeout passes, and tells
 * which of the two happened. Used instead of `AbortSignal.any([parent, AbortSignal.timeout(ms)])`
 * because on Node 20 every `AbortSignal.any` leaves a record on its long-lived parent (about 60
 * bytes per call that GC never reclaims: some 60 MB over a million requests), while this one
 * removes its listener and clears its timer in `dispose()`.
 *
 * @example
 *   const link = new LinkedSignal([runSignal], 30_000);
 *   try { await fetch(url, { signal: link.signal }); }
 *   catch { if (link.timedOut) ...; }
 *   finally { link.dispose(); }
 */
export class LinkedSignal {
  readonly #controller = new AbortController();
  readonly #parents: AbortSignal[] = [];
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
      p.addEventListener("abort", this.#onParentAbort, { once: true });
      this.#parents.push(p);
    }
    if (timeoutMs !== undefined) {
      this.#timer = setTimeout(() => {
        this.#timedOut = true;
        this.#controller.abort(new DOMException(`timed out after ${timeoutMs} ms`, "TimeoutError"));
      }, timeoutMs);
    }
  }

  readonly #onParentAbort = (event: Event) => {
    if (this.#controller.signal.aborted) return;
    this.#cancelled = true;
    this.#controller.abort((event.target as AbortSignal).reason);
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
    for (const p of this.#parents) p.removeEventListener("abort", this.#onParentAbort);
    this.#parents.length = 0;
  }
}
