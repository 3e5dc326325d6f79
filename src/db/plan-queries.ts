import { type Kysely, sql } from "kysely";
import { type Database, TOOL_TABLES } from "./schema.ts";

/**
 * `apply --plan P`: copies into run `runId` the valid source rows of plan `planRunId` whose identity
 * had a client control to create (`missing_client_control`). The new run re-reads the platform for
 * exactly those identities before writing anything.
 *
 * @example
 *   await copyPlanCreateCandidates(db, "20260101-120000-ab12", "20260101-110000-cd34");
 */
export async function copyPlanCreateCandidates(
  db: Kysely<Database>,
  runId: string,
  planRunId: string,
): Promise<void> {
  await sql`
    insert into ${sql.table(TOOL_TABLES.sourceRows)}
      (run_id, seq, identity_id, user_disabled, admin_disabled, anomaly, anomaly_detail, valid)
    select ${runId}, s.seq, s.identity_id, s.user_disabled, s.admin_disabled, s.anomaly,
           s.anomaly_detail, s.valid
    from ${sql.table(TOOL_TABLES.sourceRows)} s
    where s.run_id = ${planRunId} and s.valid and exists (
      select 1 from ${sql.table(TOOL_TABLES.findings)} f
      where f.run_id = ${planRunId} and f.identity_id = s.identity_id
        and f.finding = 'missing_client_control')
  `.execute(db);
}
