/**
 * A run's coverage (issue 50 §1): how many of the candidates it needed it read, and which finding
 * kinds its strategy cannot see at all. summary.json `coverage`; one line in every summary.
 */
import type { CoverageCounts } from "../../db/journal/coverage-queries.ts";
import type { RunSummary } from "../../reports/summary.ts";

/**
 * Finding kinds a strategy's reads cannot detect, because they arise on identities it never
 * reads: a filtered listing shows only SELL_ONLY holders (and the candidates by id), so an
 * unflagged identity without a SELL_ONLY (`platform_will_restrict`) or known only by its legacy
 * fields (`unknown_to_source`) goes unseen; per-identity reads only the candidates (and the
 * identities the tool acted on), so every finding of an unflagged identity goes unseen too.
 * A complete bulk listing sees every kind.
 */
export const NOT_LOOKED_FOR: Readonly<Record<string, readonly string[]>> = {
  bulk: [],
  filtered: ["platform_will_restrict", "unknown_to_source"],
  "per-identity": [
    "platform_will_restrict",
    "unknown_to_source",
    "unexpected_client_control",
    "unexpected_service_control",
    "orphaned_own_control",
  ],
};

/** What an `apply --plan` re-reads: the plan's creates, nothing else. */
const PLAN_ONLY = [...(NOT_LOOKED_FOR["per-identity"] ?? [])];

/**
 * summary.json's `coverage` of a run read with `strategy` (null: a resumed run without it).
 *
 * @example
 *   coverageOf({ candidates: 10, read: 9, readFailed: 1, listed: 5 }, "filtered")
 *   // { candidates: 10, candidates_read: 9, candidates_unread: 1, read_failed: 1,
 *   //   not_looked_for: ["platform_will_restrict", "unknown_to_source"],
 *   //   observed_by: { filtered_listing: 5, read_by_id: 4, read_failed: 1, ... } }
 */
export function coverageOf(
  c: CoverageCounts,
  strategy: string | null,
  sinceLast?: SinceLastCoverage,
): RunSummary["coverage"] {
  const known = strategy !== null ? NOT_LOOKED_FOR[strategy] : undefined;
  const carried = c.carried ?? 0;
  const base = {
    candidates: c.candidates,
    candidates_read: c.read - carried,
    candidates_unread: c.candidates - c.read + carried,
    read_failed: c.readFailed,
    not_looked_for: [...(known ?? (strategy?.startsWith("the plan") ? PLAN_ONLY : []))],
    observed_by: observedBy(c, strategy),
  };
  if (!sinceLast) return base;
  const { mode, reason, since, since_run_id, view_run_id } = sinceLast;
  if (mode === "complete") return { ...base, mode, reason };
  return { ...base, mode, reason, since, since_run_id, view_run_id, carried: sinceLast.carried };
}

/** What `--since-last` adds to a run's coverage (issue 55): the run's mode, and what it carried. */
export interface SinceLastCoverage {
  readonly mode: "complete" | "incremental";
  readonly reason: string;
  readonly since?: string;
  readonly since_run_id?: string;
  readonly view_run_id?: string;
  /** Identities carried as last observed, candidates or not. */
  readonly carried?: number;
}

/**
 * How the candidates were observed, as each was recorded when observed (`observed_via`): by a
 * complete listing or a filtered listing (the run's strategy says which), by a read by id (after
 * a listing: those it did not show; per-identity: every one), not read, or read failed. An
 * `apply --plan` lists nothing itself: what the plan listed counts as read by id.
 */
function observedBy(c: CoverageCounts, strategy: string | null) {
  const listing = strategy === "bulk" || strategy === "filtered" ? c.listed : 0;
  const carried = c.carried ?? 0;
  return {
    complete_listing: strategy === "bulk" ? listing : 0,
    filtered_listing: strategy === "filtered" ? listing : 0,
    read_by_id: c.read - listing - carried,
    not_read: c.candidates - c.read - c.readFailed,
    read_failed: c.readFailed,
    ...(carried > 0 ? { carried } : {}),
  };
}
