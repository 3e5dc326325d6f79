/**
 * The counting queries behind a run's ledger (`migration/run/ledger.ts`): what the source, the
 * findings and the journal of one run hold, counted straight from the tables.
 */
import { type Kysely, sql } from "kysely";
import { type Database, TOOL_TABLES } from "../schema.ts";

/** A run's books, as its tables count them. */
export interface LedgerCounts {
  /** Valid source candidates (a flag true), by identity. */
  readonly candidates: number;
  /** Of those, identities with no classified finding. */
  readonly candidatesWithoutFinding: number;
  /** Findings stored more than once for one identity (same kind, expectation and control). */
  readonly repeatedFindings: number;
  /**
   * Findings that call for a create: `missing_client_control`, those whose create the platform
   * answered 404 (the finding then becomes `identity_not_found`, its action stays), and
   * `awaiting_platform_migration` ones `--wait-for-platform-s` made due (journaled with a create).
   */
  readonly createFindings: number;
  /** Findings that call for a delete under `--prune` (prunable, with an observed control). */
  readonly deleteFindings: number;
  /** `orphaned_own_control` findings with an observed control: deletes under `--prune-orphans`. */
  readonly orphanFindings: number;
  /** Create actions pointing at a finding, and delete actions pointing at one. */
  readonly createActions: number;
  readonly deleteActions: number;
  /** Findings pointed at by more than one action. */
  readonly findingsActedTwice: number;
  /** Every action of the run, and every finding. */
  readonly actions: number;
  readonly findings: number;
}

/**
 * Counts a run's books in one statement.
 *
 * @example
 *   const counts = await countLedger(db, runId);
 *   counts.candidatesWithoutFinding // 0 when every candidate was classified
 */
export async function countLedger(db: Kysely<Database>, runId: string): Promise<LedgerCounts> {
  const S = sql.table(TOOL_TABLES.sourceRows);
  const F = sql.table(TOOL_TABLES.findings);
  const A = sql.table(TOOL_TABLES.actions);
  const classified = sql`f.finding not in ('invalid_source_row', 'source_warning')`;
  const r = await sql<Record<keyof LedgerCounts, string | number>>`
    with cand as (
      select distinct s.identity_id from ${S} s
      where s.run_id = ${runId} and s.valid and s.identity_id is not null
        and (s.user_disabled or s.admin_disabled)
    ), acted as (
      select a.finding_id, a.action, count(*) as n from ${A} a
      where a.run_id = ${runId} and a.finding_id is not null group by a.finding_id, a.action
    )
    select
      (select count(*) from cand) as "candidates",
      (select count(*) from cand where not exists (
         select 1 from ${F} f where f.run_id = ${runId} and f.identity_id = cand.identity_id
           and ${classified})) as "candidatesWithoutFinding",
      (select coalesce(sum(n - 1), 0) from (
         select count(*) as n from ${F} f where f.run_id = ${runId} and ${classified}
         group by f.identity_id, f.finding, f.expected_set_by, f.observed_control_id
         having count(*) > 1) d) as "repeatedFindings",
      (select count(*) from ${F} f where f.run_id = ${runId}
         and (f.finding = 'missing_client_control'
           or (f.finding in ('identity_not_found', 'awaiting_platform_migration')
             and exists (select 1 from acted
             where acted.finding_id = f.id and acted.action = 'create'))))
        as "createFindings",
      (select count(*) from ${F} f where f.run_id = ${runId} and f.prunable
         and f.observed_control_id is not null and f.finding <> 'orphaned_own_control')
        as "deleteFindings",
      (select count(*) from ${F} f where f.run_id = ${runId}
         and f.finding = 'orphaned_own_control' and f.observed_control_id is not null
         and f.identity_id is not null) as "orphanFindings",
      (select coalesce(sum(n), 0) from acted where action = 'create') as "createActions",
      (select coalesce(sum(n), 0) from acted where action = 'delete') as "deleteActions",
      (select count(*) from (select finding_id from acted group by finding_id
         having sum(n) > 1) t) as "findingsActedTwice",
      (select count(*) from ${A} a where a.run_id = ${runId}) as "actions",
      (select count(*) from ${F} f where f.run_id = ${runId}) as "findings"
  `.execute(db);
  const row = r.rows[0] as Record<keyof LedgerCounts, string | number>;
  const out = {} as Record<keyof LedgerCounts, number>;
  for (const [k, v] of Object.entries(row)) out[k as keyof LedgerCounts] = Number(v);
  return out;
}
