/**
 * Runs one set-based statement over whole runs (a world delta) with PostgreSQL's nested loops off,
 * in a transaction of its own (`set local`), on PostgreSQL and PGlite alike.
 *
 * Why: the planner sizes a CTE from its estimate, and the delta's CTEs are built from the journal,
 * whose statistics are older than the writes they filter on (an apply's actions are analysed while
 * pending; `status = 'succeeded'` then looks empty). It took the 100,225 controls an apply created
 * for 2 and nested a loop over them against the reconcile's 100,225: 10^10 comparisons, a
 * reconcile after an apply of 1,000,000 identities stuck for many minutes in one statement (5.9 s
 * of 6.7 s at 100,000). Hash and merge joins cost about the same whatever the estimate; a nested
 * loop is only kept where no other join can do (a subplan, a non-equality condition).
 *
 * @example
 *   await withHashJoins(db, (trx) => sql`insert into ... select ...`.execute(trx));
 */
import { type Kysely, sql } from "kysely";
import type { Database } from "../schema.ts";

export function withHashJoins<T>(
  db: Kysely<Database>,
  statement: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await sql`set local enable_nestloop = off`.execute(trx);
    return statement(trx);
  });
}
