/**
 * The findings stream's phase and its transitions, pure: `findings-stream.ts` holds one
 * `FindingsState` and changes it only through `nextFindingsState`.
 *
 * - `holding`: the source rows are not stored yet; a listed page waits in memory (or, past the
 *   memory allowed, is put aside in the database);
 * - `releasing`: the source rows are stored; a page is classified as it arrives, and the held
 *   ones are released in the background, one at a time after the event loop's other work;
 * - `listing_over`: `finish` was called; the held pages left go several to a statement, unpaced;
 * - `failed`: the background release failed; every later call throws its error;
 * - `closed`: `close` was called; the background stops (remembering whether the source rows were
 *   stored, and the failure, if any, for a page still on its way).
 */

export type FindingsState =
  | { readonly phase: "holding" | "releasing" | "listing_over" }
  | { readonly phase: "failed"; readonly err: unknown }
  | {
      readonly phase: "closed";
      readonly sourceStored: boolean;
      readonly failure: { readonly err: unknown } | null;
    };

export type FindingsEvent =
  | { readonly kind: "source_stored" }
  | { readonly kind: "listing_over" }
  | { readonly kind: "failed"; readonly err: unknown }
  | { readonly kind: "closed" };

export const FIRST_FINDINGS_STATE: FindingsState = { phase: "holding" };

/**
 * @example
 *   nextFindingsState({ phase: "holding" }, { kind: "source_stored" }) // { phase: "releasing" }
 */
export function nextFindingsState(s: FindingsState, e: FindingsEvent): FindingsState {
  switch (e.kind) {
    case "source_stored":
      return s.phase === "holding" ? { phase: "releasing" } : s;
    case "listing_over":
      return s.phase === "releasing" ? { phase: "listing_over" } : s;
    case "failed":
      // The first failure is the stream's; a closed stream still reports it to a late page.
      if (s.phase === "closed") return s.failure ? s : { ...s, failure: { err: e.err } };
      return s.phase === "failed" ? s : { phase: "failed", err: e.err };
    case "closed":
      if (s.phase === "closed") return s;
      return {
        phase: "closed",
        sourceStored: sourceStored(s),
        failure: s.phase === "failed" ? { err: s.err } : null,
      };
  }
}

/** Whether the source rows are stored: pages are then classified as they arrive. */
export function sourceStored(s: FindingsState): boolean {
  if (s.phase === "closed") return s.sourceStored;
  return s.phase !== "holding";
}

/** The failure every later call throws, if any. */
export function failureOf(s: FindingsState): { readonly err: unknown } | null {
  if (s.phase === "failed") return { err: s.err };
  return s.phase === "closed" ? s.failure : null;
}

/** Whether the background release goes on (neither failed nor closed). */
export const releases = (s: FindingsState): boolean =>
  s.phase === "releasing" || s.phase === "listing_over";
