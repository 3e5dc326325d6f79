/**
 * A partitioned listing's phase and its transitions, pure: `partitioned-listing.ts` holds one
 * `ListingState` and changes it only through `nextListingState`.
 *
 * - `single`: one cursor, its pages placed in created_at windows, so it can be split once the
 *   latency asks for more cursors;
 * - `unsplittable`: one cursor to the end, pages taken as served (one cursor was asked for, or an
 *   identity without a readable created_at came before any split);
 * - `split`: windows read side by side; an identity without created_at now fails the listing;
 * - `stopping`: a window failed for good: no cursor starts, the running ones end (remembering how
 *   they were reading, for a page already on its way);
 * - `done` or `failed`: every cursor has returned.
 */

export type CursorPlan = "single" | "unsplittable" | "split";

export type ListingState =
  | { readonly phase: CursorPlan }
  | { readonly phase: "stopping"; readonly cursors: CursorPlan; readonly err: unknown }
  | { readonly phase: "failed"; readonly err: unknown }
  | { readonly phase: "done" };

export type ListingEvent =
  | { readonly kind: "split" }
  | { readonly kind: "no_created_at" }
  | { readonly kind: "failed"; readonly err: unknown }
  | { readonly kind: "drained" };

/** The first phase: one cursor, split later unless only one was asked for. */
export const firstListingState = (maxParallel: number): ListingState => ({
  phase: maxParallel > 1 ? "single" : "unsplittable",
});

/** How the cursors read while the listing runs or stops; null once it has ended. */
export function cursorPlan(s: ListingState): CursorPlan | null {
  if (s.phase === "stopping") return s.cursors;
  if (s.phase === "done" || s.phase === "failed") return null;
  return s.phase;
}

/** Whether pages are placed in created_at windows (`acceptPage`), not taken as served. */
export function windowed(s: ListingState): boolean {
  const plan = cursorPlan(s);
  return plan === "single" || plan === "split";
}

/**
 * @example
 *   nextListingState({ phase: "single" }, { kind: "split" }) // { phase: "split" }
 *   nextListingState({ phase: "split" }, { kind: "failed", err }) // stopping, cursors "split"
 */
export function nextListingState(s: ListingState, e: ListingEvent): ListingState {
  switch (e.kind) {
    case "split":
      return s.phase === "single" ? { phase: "split" } : s;
    case "no_created_at":
      if (s.phase === "single") return { phase: "unsplittable" };
      if (s.phase === "stopping" && s.cursors === "single") {
        return { ...s, cursors: "unsplittable" };
      }
      return s;
    case "failed": {
      // The first failure is the listing's; later ones are its cursors ending.
      const plan = s.phase === "stopping" ? null : cursorPlan(s);
      return plan === null ? s : { phase: "stopping", cursors: plan, err: e.err };
    }
    case "drained":
      if (s.phase === "stopping") return { phase: "failed", err: s.err };
      return cursorPlan(s) === null ? s : { phase: "done" };
  }
}

/** What sets how many cursors keep the path's rate budget busy. */
export interface CursorPace {
  /** Page latency measured so far (or a previous run's), ms; null before anything is known. */
  readonly latencyMs: number | null;
  /** Mean time to store a page, ms (0 before the first). */
  readonly storeMs: number;
  /** The path's current rate budget, requests/s. */
  readonly rate: number;
  readonly maxParallel: number;
}

/**
 * Cursors that keep the budget busy: one per (cycle × rate), a cycle being the longer of a page's
 * latency and its store, with headroom (the cycle is a median, and a cursor short of the budget
 * is time lost for good, while one too many only waits for its turn at the budget).
 *
 * @example
 *   cursorTarget({ phase: "single" }, { latencyMs: 150, storeMs: 20, rate: 40, maxParallel: 8 }) // 8
 */
export function cursorTarget(s: ListingState, pace: CursorPace): number {
  if (!windowed(s) || pace.latencyMs === null) return 1;
  const cycle = Math.max(pace.latencyMs, pace.storeMs);
  return Math.max(1, Math.min(pace.maxParallel, Math.ceil((cycle / 1000) * pace.rate * 1.25) + 1));
}
