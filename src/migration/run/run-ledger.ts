/**
 * The ledger of a finished run, checked before its exit code is chosen: counts its tables and
 * weighs them against each other and against the figures its report states (`ledger.ts`).
 */
import type { Kysely } from "kysely";
import { countLedger, type LedgerCounts } from "../../db/journal/ledger-queries.ts";
import type { Database, RunMode } from "../../db/schema.ts";
import { checkLedger, type LedgerGap } from "./ledger.ts";
import type { RunFigures } from "./run-summary.ts";

const sum = (r: Record<string, number>) => Object.values(r).reduce((n, v) => n + v, 0);

/**
 * Starts counting a finished run's books (once its tables are final: a not-found create has
 * become its finding), so that on PostgreSQL the count runs on its own connection beside the
 * figures and the world's delta. A failure surfaces where it is awaited.
 *
 * @example
 *   const counts = startLedgerCount(db, runId);
 *   const gap = await runLedgerGap(counts, "apply", { prune: false, pruneOrphans: false }, figures);
 */
export function startLedgerCount(db: Kysely<Database>, runId: string): Promise<LedgerCounts> {
  const counts = countLedger(db, runId);
  counts.catch(() => {}); // awaited by runLedgerGap, or dropped with an interrupted run
  return counts;
}

/** The first gap in a finished run's books, or null when they balance. */
export async function runLedgerGap(
  counted: Promise<LedgerCounts>,
  mode: RunMode,
  prune: { readonly prune: boolean; readonly pruneOrphans: boolean },
  figures: RunFigures,
): Promise<LedgerGap | null> {
  const counts = await counted;
  const reconcile = mode === "reconcile";
  return checkLedger(
    counts,
    {
      journalCreates: mode !== "plan",
      journalDeletes: reconcile && prune.prune,
      pruneOrphans: reconcile && prune.pruneOrphans,
    },
    { findings: sum(figures.findings), actions: sum(figures.outcomes) },
  );
}
