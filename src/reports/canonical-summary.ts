/**
 * One order for a summary's keys, whatever stored it: PostgreSQL's jsonb keeps object keys by
 * length then bytes, so a summary read back from `runs.summary` (for `report RUN`) comes back in
 * another order than the run wrote it. Writing every summary in this order makes summary.json
 * byte-identical and summary.md and report.html list categories and endpoints in the same order.
 */
import type { RunSummary } from "./summary.ts";

/** summary.json's top-level keys, in the order the README documents them. */
const TOP_LEVEL: readonly (keyof RunSummary)[] = [
  "run_id",
  "mode",
  "status",
  "started_at",
  "finished_at",
  "duration_s",
  "strategy",
  "platform_state",
  "source",
  "coverage",
  "findings",
  "findings_left",
  "actions_by_finding",
  "outcomes",
  "requests",
  "throughput",
  "changes",
  "exit_code",
  "ledger_error",
  "control_events",
  "revert",
  "reports",
];

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Nested objects with their keys sorted (by code unit, as `Array.prototype.sort` does). */
function sortedDeep(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedDeep);
  if (!isPlainObject(v)) return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sortedDeep(v[k])]),
  );
}

/**
 * The summary with its top-level keys in the documented order (unknown ones after, sorted) and
 * every nested object's keys sorted.
 *
 * @example
 *   canonicalSummary(JSON.parse(storedJsonb)) // the same bytes as the run's own summary.json
 */
export function canonicalSummary<T extends object>(s: T): T {
  const src = s as Record<string, unknown>;
  const keys = [
    ...TOP_LEVEL.filter((k) => k in src),
    ...Object.keys(src)
      .filter((k) => !(TOP_LEVEL as readonly string[]).includes(k))
      .sort(),
  ];
  return Object.fromEntries(
    keys.filter((k) => src[k] !== undefined).map((k) => [k, sortedDeep(src[k])]),
  ) as T;
}
