import { type Kysely, sql } from "kysely";
import { type ActionStatus, type Database, TOOL_TABLES } from "../schema.ts";

/** How many of a run's actions ended in one status and outcome, per finding kind they act on. */
export interface FindingOutcomeCount {
  readonly finding: string;
  readonly status: ActionStatus;
  readonly outcome: string | null;
  readonly n: number;
}

/**
 * A run's actions grouped by the kind of finding each acts on, then by status and outcome: what
 * the run did about each kind of finding (summaries: "missing_client_control 0 left, 1000
 * created").
 *
 * @example
 *   await countOutcomesByFinding(db, runId)
 *   // [{ finding: "missing_client_control", status: "succeeded", outcome: "created", n: 1000 }]
 */
export async function countOutcomesByFinding(
  db: Kysely<Database>,
  runId: string,
): Promise<FindingOutcomeCount[]> {
  const r = await sql<FindingOutcomeCount>`
    select f.finding, a.status, a.outcome, count(*)::int as n
    from ${sql.table(TOOL_TABLES.actions)} a
    join ${sql.table(TOOL_TABLES.findings)} f on f.id = a.finding_id
    where a.run_id = ${runId}
    group by f.finding, a.status, a.outcome
    order by f.finding, a.status, a.outcome`.execute(db);
  return r.rows.map((row) => ({ ...row, n: Number(row.n) }));
}

/**
 * Contested identities of a run that it wrote anyway (`--force-contested`): a `contested` finding
 * whose identity has a succeeded action in the same run. Told once, and never counted as left or,
 * by the next run, as resolved.
 *
 * @example
 *   await countForcedContested(db, runId) // 5
 */
export async function countForcedContested(db: Kysely<Database>, runId: string): Promise<number> {
  const r = await sql<{ n: number | string }>`
    select count(distinct f.identity_id) as n from ${sql.table(TOOL_TABLES.findings)} f
    where f.run_id = ${runId} and f.finding = 'contested' and exists (
      select 1 from ${sql.table(TOOL_TABLES.actions)} a where a.run_id = ${runId}
        and a.identity_id = f.identity_id and a.status = 'succeeded')`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}
