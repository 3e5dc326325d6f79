/**
 * Whether a `--since-last` run reads incrementally or whole (issue 55), and why. Pure.
 */
import type { SinceLastBasis } from "../../db/journal/incremental-queries.ts";

/** summary.json's `platform_state.since_last` and the base of `coverage.mode`. */
export interface SinceLastSummary {
  readonly mode: "incremental" | "complete";
  /** Why a complete read (a `--since-last` run that read everything says why). */
  readonly reason: string;
  /** Incremental: the `updated_at.gte` bound asked for, and the runs it built on. */
  readonly since?: string;
  readonly since_run_id?: string;
  readonly view_run_id?: string;
  /** Incremental: identities the platform listed as changed, and identities read by id. */
  readonly listed_changed?: number;
  readonly read_by_id?: number;
  /** Incremental: identities read again by id, by their first reason. */
  readonly read_by_id_because?: Readonly<Record<string, number>>;
  /** Incremental: candidates whose source row changed, carried bare from the complete run. */
  readonly carried_bare?: number;
  /** A complete run that checked the incremental runs since the last complete one. */
  readonly checked_runs?: number;
  readonly stale_incremental?: number;
}

export type SinceLastChoice =
  | { readonly mode: "complete"; readonly reason: string; readonly check: boolean }
  | {
      readonly mode: "incremental";
      readonly reason: string;
      readonly sinceAt: Date;
      readonly completeId: string;
      readonly viewId: string;
    };

/**
 * The choice for a run on `platform` given what it builds on: complete when there is no complete
 * read yet, when the last complete read found a miss (`stale_incremental`), or every
 * `fullEvery`th run (then it checks the incremental runs since); else incremental from the last
 * complete read's start less `marginS`.
 *
 * @example
 *   chooseSinceLast(basis, { marginS: 300, fullEvery: 7 }, "https://api.example|…").mode
 */
export function chooseSinceLast(
  b: SinceLastBasis,
  o: { readonly marginS: number; readonly fullEvery: number },
  platform: string,
): SinceLastChoice {
  if (!b.complete || !b.view) {
    return {
      mode: "complete",
      reason: `no earlier complete read of platform ${platform} with this source: reading everything`,
      check: false,
    };
  }
  if (b.staleMisses > 0) {
    return {
      mode: "complete",
      reason: `refusing to read incrementally: the complete run ${b.complete.id} found ${b.staleMisses} stale_incremental ${b.staleMisses === 1 ? "identity" : "identities"} on platform ${platform} (${sample(b)}changes the platform's updated_at did not show); reading everything until a complete run finds no miss`,
      check: b.incrementals > 0,
    };
  }
  if (b.incrementals + 1 >= o.fullEvery) {
    return {
      mode: "complete",
      reason: `run ${b.incrementals + 1} of every ${o.fullEvery} since the complete run ${b.complete.id} (--full-every): reading everything and checking what the ${b.incrementals} incremental run${b.incrementals === 1 ? "" : "s"} since concluded`,
      check: b.incrementals > 0,
    };
  }
  // Whole seconds, rounded down: a platform that reads the bound to the second lists no less.
  const sinceAt = new Date(
    Math.floor((b.complete.startedAt.getTime() - o.marginS * 1000) / 1000) * 1000,
  );
  return {
    mode: "incremental",
    reason: `reading what changed since ${sinceAt.toISOString()} (the complete run ${b.complete.id}'s start less ${o.marginS} s); the rest is carried from run ${b.view.id}`,
    sinceAt,
    completeId: b.complete.id,
    viewId: b.view.id,
  };
}

/** "a, b, c, ...: " of the first identities a complete run found stale. */
function sample(b: SinceLastBasis): string {
  const ids = b.staleSample ?? [];
  if (ids.length === 0) return "";
  return `${ids.join(", ")}${b.staleMisses > ids.length ? ", ..." : ""}: `;
}
