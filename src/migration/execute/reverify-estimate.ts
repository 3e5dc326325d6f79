/**
 * What re-verification's cost model needs to know of the platform and the source, from the runs
 * already recorded (`reverify.ts` chooses its strategy with it).
 */
import type { Kysely } from "kysely";
import { getRun } from "../../db/journal/run-queries.ts";
import { previousListings } from "../../db/journal/snapshot-queries.ts";
import type { Database } from "../../db/schema.ts";
import type { StrategyInputs } from "../read/state-strategy.ts";

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/**
 * What the cost model needs to know of the platform: its identities (the latest bulk listing's
 * count, else the largest source row count of the run and the runs it came from: an `apply --plan`
 * run copies only its plan's candidates) and how many hold a SELL_ONLY (the latest listing's).
 */
export async function platformEstimate(
  db: Kysely<Database>,
  runId: string,
): Promise<
  Omit<StrategyInputs, "candidates" | "writes" | "rate" | "prune" | "readsById" | "lackingKnown">
> {
  const previous = await previousListings(db, runId);
  const lastBulk = previous.find((p) => p.listing.filter === "none");
  const lastAny = previous[0];
  const sellOnly = num(lastAny?.listing.sell_only_identities);
  const listed = num(lastBulk?.listing.identities);
  return {
    platformIdentities: listed ?? (await sourceRowsOfChain(db, runId)),
    platformIdentitiesFrom:
      listed !== null ? `the listing of run ${lastBulk?.runId}` : "the source's row count",
    sellOnlyIdentities: sellOnly,
    sellOnlyFrom: sellOnly !== null ? `the listing of run ${lastAny?.runId}` : "",
  };
}

export async function sourceRowsOfChain(db: Kysely<Database>, runId: string): Promise<number> {
  let most = 0;
  let id: string | null = runId;
  for (let depth = 0; id !== null && depth < 10; depth++) {
    const run = await getRun(db, id);
    const counts = (run?.counts ?? {}) as Record<string, number>;
    most = Math.max(most, Number(run?.source_rows_read ?? counts.source_rows_read ?? 0));
    id = run?.parent_run_id ?? null;
  }
  return most;
}
