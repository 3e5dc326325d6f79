/**
 * Findings that only history can tell: orphaned own controls, identities remembered unknown to the
 * platform, contested identities; and the findings' delta against the previous writing run's
 * state after its actions. SQL only; `migration/run/world-delta.ts` decides when each applies.
 */
import { type Kysely, sql } from "kysely";
import { insertNoteFindings } from "../journal/note-findings.ts";
import { type Database, TOOL_TABLES } from "../schema.ts";
import { T } from "../table-refs.ts";
import { type Lineage, lineageRuns } from "./world-delta-queries.ts";

/** A finding the tool may act on: a create to do or a control it may delete. */
const ACTIONABLE = sql`(finding in ('missing_client_control', 'contested') or prunable)`;

/**
 * `unknown_to_source` findings whose control this tool created become `orphaned_own_control`: the
 * row it was created for is gone, so no legacy flag asks for a restriction any more (both flags
 * recorded false, which is what the delete guard weighs) and `--prune-orphans` may delete it.
 * The detail says when the row was first seen gone. Returns the findings marked.
 */
export async function markOrphans(db: Kysely<Database>, runId: string): Promise<number> {
  const ours = sql`from ${T.a} a where a.action = 'create' and a.status = 'succeeded'
    and a.result_control_id = f.observed_control_id`;
  const r = await sql`
    update ${T.f} f set finding = 'orphaned_own_control', user_disabled = false,
      admin_disabled = false, prunable = true,
      detail = 'created by this tool in run ' || (select a.run_id ${ours} order by a.id limit 1)
        || '; its source row is gone' || coalesce((select ' (deleted: first seen missing by run '
          || w.run_id || ' at ' || to_char(w.seen_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
          || ')' from ${T.w} w where w.identity_id = f.identity_id and w.kind = 'source_row_removed'
          order by w.seen_at limit 1), '')
    where f.run_id = ${runId} and f.finding = 'unknown_to_source' and exists (select 1 ${ours})`.execute(
    db,
  );
  return Number(r.numAffectedRows ?? 0);
}

/** Journals the delete of every orphaned own control of the run (`--prune-orphans`). */
export async function journalOrphanDeletes(db: Kysely<Database>, runId: string): Promise<number> {
  const r = await sql`
    insert into ${T.a} (run_id, identity_id, finding_id, action, control_type, control_key, status)
    select run_id, identity_id, id, 'delete', 'SELL_ONLY', observed_control_id, 'pending' from ${T.f}
    where run_id = ${runId} and finding = 'orphaned_own_control' and observed_control_id is not null
      and identity_id is not null`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

/**
 * The 404 memory: a create whose identity the previous writing run found unknown to the platform is
 * not sent again while no listing of this run shows the identity. Its finding becomes
 * `identity_not_found` and its pending create is dropped (nothing was sent). Returns the count.
 */
export async function rememberNotFound(
  db: Kysely<Database>,
  runId: string,
  sinceId: string,
): Promise<number> {
  const r = await sql`
    with hit as (
      update ${T.f} f set finding = 'identity_not_found',
        detail = 'the platform answered 404 in run ' || ${sinceId}
          || ' and no listing has shown it since; not sent again until one does'
      where f.run_id = ${runId} and f.finding = 'missing_client_control'
        and not exists (select 1 from ${T.si} s where s.run_id = ${runId} and s.identity_id = f.identity_id)
        and exists (select 1 from ${T.f} p where p.run_id = ${sinceId} and p.identity_id = f.identity_id
          and p.finding = 'identity_not_found')
      returning f.id)
    delete from ${T.a} a where a.run_id = ${runId} and a.status = 'pending'
      and a.finding_id in (select id from hit)`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

/**
 * One finding per fact: a create answered 404 turns its `missing_client_control` into
 * `identity_not_found`, the finding a listing gives the same identity.
 */
export async function notFoundCreatesToFindings(
  db: Kysely<Database>,
  runId: string,
): Promise<void> {
  await sql`
    update ${T.f} f set finding = 'identity_not_found',
      detail = 'the platform answered 404 to the create: it does not know this identity'
    from ${T.a} a where f.run_id = ${runId} and a.run_id = ${runId} and a.finding_id = f.id
      and a.action = 'create' and a.status = 'failed' and a.outcome = 'identity_not_found'`.execute(
    db,
  );
}

/**
 * Identities whose writes outside changes undid twice or more since they were last calm (a writing
 * run of the same platform and source with nothing to do on them), and that this run would act on
 * again: each gets a `contested` finding; unless `force`, their pending writes are skipped
 * (outcome `contested`). Returns the identities.
 */
export async function markContested(
  db: Kysely<Database>,
  runId: string,
  lineage: Lineage,
  force: boolean,
): Promise<number> {
  const r = await sql<{ identity_id: string; n: number; calm: string | null }>`
    with lin as (${lineageRuns(runId, lineage)}),
    cand as (select distinct w.identity_id from ${T.w} w where w.run_id = ${runId} or w.undone),
    act as (select c.identity_id from cand c where exists (select 1 from ${T.f} f
      where f.run_id = ${runId} and f.identity_id = c.identity_id and ${ACTIONABLE})),
    calm as (select a.identity_id, (select l.id from lin l where not exists (select 1 from ${T.f} f
        where f.run_id = l.id and f.identity_id = a.identity_id and ${ACTIONABLE})
        order by l.started_at desc limit 1) as calm_id from act a)
    select c.identity_id, count(*)::int as n, c.calm_id as calm from calm c
    join ${T.w} w on w.identity_id = c.identity_id and w.undone
    join ${T.runs} r on r.id = w.run_id
    where (w.run_id = ${runId} or w.run_id in (select id from lin))
      and (c.calm_id is null or r.started_at > (select started_at from ${T.runs} where id = c.calm_id))
    group by c.identity_id, c.calm_id having count(*) >= 2`.execute(db);
  if (r.rows.length === 0) return 0;
  const waiting = force
    ? "written anyway (--force-contested)"
    : "nothing more is written until --force-contested or the contest ends";
  await insertNoteFindings(
    db,
    runId,
    "contested",
    r.rows.map((x) => ({
      identity_id: x.identity_id,
      detail: `outside changes undid the tool's writes ${x.n} times${x.calm ? ` since run ${x.calm}` : ""}; ${waiting}`,
    })),
  );
  if (!force) {
    const ids = r.rows.map((x) => x.identity_id);
    await db
      .updateTable(TOOL_TABLES.actions)
      .set({ status: "skipped", outcome: "contested", updated_at: sql`now()` })
      .where("run_id", "=", runId)
      .where("status", "=", "pending")
      .where("identity_id", "in", ids)
      .execute();
  }
  return r.rows.length;
}
