/**
 * The check of a complete `--since-last` run (issue 55): what the last incremental run since the
 * previous complete read carried, against what this complete read found. SQL only;
 * `migration/read/stale-incremental.ts` decides when it runs.
 */
import { type Kysely, sql } from "kysely";
import type { Database } from "../schema.ts";
import { T } from "../table-refs.ts";
import { insertNoteFindings } from "./note-findings.ts";

/** The last incremental run built on complete run `completeId`, before run `runId`. */
export async function lastIncremental(
  db: Kysely<Database>,
  runId: string,
  completeId: string,
): Promise<{ id: string; startedAt: Date } | null> {
  const r = await sql<{ id: string; started_at: Date | string }>`
    select r.id, r.started_at from ${T.runs} r
    where r.since_run_id = ${completeId} and r.id <> ${runId} and r.source_rows_read is not null
      and r.started_at <= (select started_at from ${T.runs} where id = ${runId})
    order by r.started_at desc, r.id desc limit 1`.execute(db);
  const row = r.rows[0];
  return row ? { id: row.id, startedAt: new Date(row.started_at) } : null;
}

/** One identity whose change an incremental run missed. */
export interface Miss {
  readonly identity_id: string;
  /** The run that last observed the state the incremental run carried. */
  readonly seen_by: string;
  readonly then_controls: string;
  readonly now_controls: string;
  readonly then_fields: string;
  readonly now_fields: string;
}

const controls = (run: string) => sql`
  select identity_id, string_agg(control_id, ',' order by control_id) as ids from ${T.sc}
  where run_id = ${run} and deleted_at is null group by identity_id`;

/**
 * Identities whose state run `runId` (a complete read) found other than incremental run `incId`
 * carried it: controls, legacy fields or existence, where `incId` did not read the identity (it
 * carried it, or held nothing of it: clean), no run since `incId` started wrote to it, and it is
 * not among `changedSince` (identities the platform lists as changed since `incId`, whose change
 * may have come after it).
 */
export async function incrementalMisses(
  db: Kysely<Database>,
  runId: string,
  incId: string,
  changedSince: readonly string[],
): Promise<Miss[]> {
  const r = await sql<Miss>`
    with k as (select * from ${T.si} where run_id = ${incId}),
      c as (select * from ${T.si} where run_id = ${runId} and status in ('found', 'not_found')),
      kc as (${controls(incId)}), cc as (${controls(runId)}),
      pair as (
        select coalesce(c.identity_id, k.identity_id) as identity_id,
          coalesce(k.observed_run_id, ${incId}) as seen_by,
          k.identity_id is not null as k_held, c.identity_id is not null as c_held,
          k.status as k_status, c.status as c_status,
          coalesce(kc.ids, '') as k_ids, coalesce(cc.ids, '') as c_ids,
          coalesce(k.platform_user_disabled, false) as k_u, coalesce(k.platform_admin_disabled, false) as k_a,
          coalesce(c.platform_user_disabled, false) as c_u, coalesce(c.platform_admin_disabled, false) as c_a,
          k.observed_via as k_via
        from c full join k on k.identity_id = c.identity_id
        left join kc on kc.identity_id = coalesce(c.identity_id, k.identity_id)
        left join cc on cc.identity_id = coalesce(c.identity_id, k.identity_id))
    select identity_id, seen_by, k_ids as then_controls, c_ids as now_controls,
      case when not k_held then 'not held' else k_status || ' user_disabled=' || k_u || ' admin_disabled=' || k_a end as then_fields,
      case when not c_held then 'not held' else c_status || ' user_disabled=' || c_u || ' admin_disabled=' || c_a end as now_fields
    from pair p
    where (not k_held or k_via = 'carried')
      and not (identity_id = any(${[...changedSince]}::text[]))
      and not exists (select 1 from ${T.si} e where e.run_id = ${runId}
        and e.identity_id = p.identity_id and e.status = 'error')
      and not exists (select 1 from ${T.a} a where a.identity_id = p.identity_id and a.run_id in (
        select id from ${T.runs} where started_at >= (select started_at from ${T.runs} where id = ${incId})
          and id <> ${runId}))
      and (
        (not k_held and (c_ids <> '' or c_u or c_a))
        or (not c_held and k_status = 'found' and (k_ids <> '' or k_u or k_a))
        or (k_held and c_held and (k_status <> c_status or k_ids <> c_ids or k_u <> c_u or k_a <> c_a)))
    order by identity_id`.execute(db);
  return r.rows;
}

/** Stores a `stale_incremental` finding per miss in run `runId` (report-only, no action). */
export async function insertStaleFindings(
  db: Kysely<Database>,
  runId: string,
  rows: readonly { identity_id: string; detail: string }[],
): Promise<void> {
  await insertNoteFindings(db, runId, "stale_incremental", rows);
}
