import { type Kysely, sql } from "kysely";
import { type Database, TOOL_TABLES } from "./schema.ts";

/** A finding that one run has and another has not. */
export interface ChangedFindingRow {
  readonly identity_id: string | null;
  readonly finding: string;
  readonly owner: string;
}

/**
 * The first `limit` findings of `runId` that `otherRunId` does not have, by identity: the same
 * comparison as `findingChanges` (identity, finding kind, owner; in_sync left out), so the rows
 * listed add up to the counts summary.json gives. Swap the runs for the resolved ones.
 *
 * @example
 *   const added = await findingsNotIn(db, runId, previousRunId, 1000);
 *   const resolved = await findingsNotIn(db, previousRunId, runId, 1000);
 */
export async function findingsNotIn(
  db: Kysely<Database>,
  runId: string,
  otherRunId: string,
  limit: number,
): Promise<ChangedFindingRow[]> {
  const key = (id: string) => sql`
    select coalesce(identity_id, '') as i, finding as f, coalesce(expected_set_by, observed_set_by, '') as k
    from ${sql.table(TOOL_TABLES.findings)} where run_id = ${id} and finding <> 'in_sync'`;
  const r = await sql<{ i: string; f: string; k: string }>`
    select i, f, k from (${key(runId)} except ${key(otherRunId)}) d
    order by i, f, k limit ${limit}`.execute(db);
  return r.rows.map((x) => ({ identity_id: x.i === "" ? null : x.i, finding: x.f, owner: x.k }));
}
