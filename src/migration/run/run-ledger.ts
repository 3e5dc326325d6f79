/**
 * The ledger of a finished run, checked before its exit code is chosen: counts its tables and
 * weighs them against each other and against the figures its report states (`ledger.ts`).
 */
import type { Kysely } from "kysely";
import { countLedger } from "../../db/journal/ledger-queries.ts";
import type { Database, RunMode } from "../../db/schema.ts";
import { checkLedger, type LedgerGap } from "./ledger.ts";
import type { RunFigures } from "./run-summary.ts";

const sum = (r: Record<string, number>) => Object.values(r).reduce((n, v) => n + v, 0);

/**
 * The first gap in a finished run's books, or null when they balance.
 *
 * @example
 *   const gap = await runLedgerGap(db, runId, "apply", { prune: false, pruneOrphans: false }, figures);
 */
export async function runLedgerGap(
  db: Kysely<Database>,
  runId: string,
  mode: RunMode,
  prune: { readonly prune: boolean; readonly pruneOrphans: boolean },
  figures: RunFigures,
): Promise<LedgerGap | null> {
  const counts = await countLedger(db, runId);
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
