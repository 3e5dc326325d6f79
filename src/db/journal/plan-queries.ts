import { type Kysely, sql } from "kysely";
import { type Database, TOOL_TABLES } from "../schema.ts";

/**
 * `apply --plan P`: copies into run `runId` what plan `planRunId` knew of the identities it had a
 * client control to create for (`missing_client_control`): their valid source rows and what its
 * snapshot held of them. The new run's findings are then the plan's, exactly as approved; the
 * platform is re-read after the confirmation, before anything is sent.
 *
 * @example
 *   await copyPlanCreateCandidates(db, "20260101-120000-ab12", "20260101-110000-cd34");
 */
export async function copyPlanCreateCandidates(
  db: Kysely<Database>,
  runId: string,
  planRunId: string,
): Promise<void> {
  const planned = sql`select 1 from ${sql.table(TOOL_TABLES.findings)} f
    where f.run_id = ${planRunId} and f.finding = 'missing_client_control'`;
  await db.transaction().execute(async (trx) => {
    await sql`
      insert into ${sql.table(TOOL_TABLES.sourceRows)}
        (run_id, seq, identity_id, user_disabled, admin_disabled, anomaly, anomaly_detail, valid)
      select ${runId}, s.seq, s.identity_id, s.user_disabled, s.admin_disabled, s.anomaly,
             s.anomaly_detail, s.valid
      from ${sql.table(TOOL_TABLES.sourceRows)} s
      where s.run_id = ${planRunId} and s.valid and exists (${planned} and f.identity_id = s.identity_id)
      on conflict do nothing
    `.execute(trx);
    await sql`
      insert into ${sql.table(TOOL_TABLES.snapshotIdentities)}
        (run_id, identity_id, status, error, observed_at, observed_via)
      select ${runId}, i.identity_id, i.status, i.error, i.observed_at, i.observed_via
      from ${sql.table(TOOL_TABLES.snapshotIdentities)} i
      where i.run_id = ${planRunId} and exists (${planned} and f.identity_id = i.identity_id)
      on conflict do nothing
    `.execute(trx);
    await sql`
      insert into ${sql.table(TOOL_TABLES.snapshotControls)}
        (run_id, identity_id, control_id, type, set_by, set_by_raw, is_overridable, reason_code,
         reason, created_at, deleted_at)
      select ${runId}, c.identity_id, c.control_id, c.type, c.set_by, c.set_by_raw, c.is_overridable,
             c.reason_code, c.reason, c.created_at, c.deleted_at
      from ${sql.table(TOOL_TABLES.snapshotControls)} c
      where c.run_id = ${planRunId} and exists (${planned} and f.identity_id = c.identity_id)
      on conflict do nothing
    `.execute(trx);
  });
}
