import { type Kysely, sql } from "kysely";
import { type Database, TOOL_TABLES } from "../schema.ts";

/** One second of a run's requests, as stored (`at` in whole Unix seconds). */
export interface StoredSecond {
  readonly at: number;
  readonly requests: number;
  readonly rateLimited: number;
  readonly retries: number;
  readonly ambiguous: number;
}

const CHUNK = 1000;

/**
 * Stores the seconds a process measured for a run. A second already stored (a resumed run whose
 * processes overlapped in time) gets the new counts added, so nothing is counted twice or lost.
 *
 * @example
 *   await saveRequestSeries(db, runId, client.metrics().series);
 */
export async function saveRequestSeries(
  db: Kysely<Database>,
  runId: string,
  seconds: readonly StoredSecond[],
): Promise<void> {
  for (let i = 0; i < seconds.length; i += CHUNK) {
    const rows = seconds.slice(i, i + CHUNK).map((s) => ({
      run_id: runId,
      at: new Date(s.at * 1000),
      requests: s.requests,
      rate_limited: s.rateLimited,
      retries: s.retries,
      ambiguous: s.ambiguous,
    }));
    await db
      .insertInto(TOOL_TABLES.requestSeries)
      .values(rows)
      .onConflict((oc) =>
        oc.columns(["run_id", "at"]).doUpdateSet({
          requests: sql`${sql.ref(`${TOOL_TABLES.requestSeries}.requests`)} + excluded.requests`,
          rate_limited: sql`${sql.ref(`${TOOL_TABLES.requestSeries}.rate_limited`)} + excluded.rate_limited`,
          retries: sql`${sql.ref(`${TOOL_TABLES.requestSeries}.retries`)} + excluded.retries`,
          ambiguous: sql`${sql.ref(`${TOOL_TABLES.requestSeries}.ambiguous`)} + excluded.ambiguous`,
        }),
      )
      .execute();
  }
}

/**
 * A run's seconds with activity, oldest first.
 *
 * @example
 *   const series = await readRequestSeries(db, runId); // [{ at: 1700000000, requests: 40, ... }]
 */
export async function readRequestSeries(
  db: Kysely<Database>,
  runId: string,
): Promise<StoredSecond[]> {
  const rows = await db
    .selectFrom(TOOL_TABLES.requestSeries)
    .select(["at", "requests", "rate_limited", "retries", "ambiguous"])
    .where("run_id", "=", runId)
    .orderBy("at")
    .execute();
  return rows.map((r) => ({
    at: Math.floor(new Date(r.at).getTime() / 1000),
    requests: r.requests,
    rateLimited: r.rate_limited,
    retries: r.retries,
    ambiguous: r.ambiguous,
  }));
}
