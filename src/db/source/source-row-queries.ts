import { type Kysely, sql } from "kysely";
import { type Database, TOOL_TABLES } from "../schema.ts";

/**
 * Where a run's invalid source rows are in the source, as the reader numbered them (`seq`: the
 * row's 1-based position in the order it read the relation, storage order for a table, id order
 * otherwise), the first `limit` in `seq` order. That is also the order of the run's
 * `invalid_source_row` findings (`insertInvalidRowFindings` stores them in one statement by
 * `seq`), so the k-th such finding of the diff is the k-th row here.
 *
 * @example
 *   const [first] = await invalidSourceRowSeqs(db, runId, 10_000); // 17: "source row 17"
 */
export async function invalidSourceRowSeqs(
  db: Kysely<Database>,
  runId: string,
  limit: number,
): Promise<number[]> {
  const r = await sql<{ seq: number }>`
    select seq::int as seq from ${sql.table(TOOL_TABLES.sourceRows)}
    where run_id = ${runId} and anomaly is not null and valid is not true
    order by seq limit ${limit}`.execute(db);
  return r.rows.map((x) => Number(x.seq));
}
