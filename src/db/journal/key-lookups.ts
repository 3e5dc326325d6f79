/**
 * Runs a statement that looks a batch of ids up by key (`identity_id = any($ids)` on a
 * `(run_id, identity_id)` index) with sequential scans off, so that it costs its batch, not the
 * run: on PostgreSQL and PGlite alike.
 *
 * Why: the planner weighs an index descent per id against one scan of the table, sized by its
 * statistics. PGlite has no autovacuum, and a run's tables grow long after they were last
 * analysed, so it took a scan: a plan past the source index's bound claimed each listing page
 * against every source row of the run (28 ms a page at 2,000,000 identities, growing with the
 * run), and a plan of 10,000,000 identities did not finish in 20 minutes. With scans off, the
 * same batch is an index descent per id whatever the run's size.
 *
 * In a caller's transaction, the setting is set back to its default after the statement.
 *
 * @example
 *   const rows = await withKeyLookups(db, (trx) => sql`select … where identity_id = any(${ids})`.execute(trx));
 */
import { type Kysely, sql } from "kysely";
import type { Database } from "../schema.ts";

export async function withKeyLookups<T>(
  db: Kysely<Database>,
  statement: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  if (db.isTransaction) {
    await sql`set local enable_seqscan = off`.execute(db);
    try {
      return await statement(db);
    } finally {
      await sql`set local enable_seqscan to default`.execute(db);
    }
  }
  return db.transaction().execute(async (trx) => {
    await sql`set local enable_seqscan = off`.execute(trx);
    return statement(trx);
  });
}
