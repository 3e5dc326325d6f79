/**
 * The world's delta in SQL: a writing run's state as read (source flags, SELL_ONLY controls,
 * identities the platform does not know) against the previous writing run's state after the
 * succeeded writes of every run since (its own, a revert's), stored in `world_changes` (0009).
 */
import { type Kysely, type RawBuilder, sql } from "kysely";
import {
  type Database,
  type Run,
  TOOL_SCHEMA,
  TOOL_TABLES,
  type WorldChange,
  type WorldChangeKind,
} from "../schema.ts";
import { T as TABLES } from "../table-refs.ts";
import { withHashJoins } from "./hash-joins.ts";
import { listedBare } from "./listed-bare-sql.ts";

const T = {
  ...TABLES,
  ids: sql.table(`${TOOL_SCHEMA}.source_ids`),
};

/**
 * The platform and source a run was bound to: the platform's key as `runs.platform_key` records it
 * (0014: API URL, token URL and client id; a run of an older version recorded none and is in no
 * lineage) and the source as `runs.options` records it.
 */
export interface Lineage {
  readonly platformKey: string;
  readonly source: Readonly<Record<string, unknown>>;
}

/** Writing runs of the same platform and source whose read completed, started before `runId`. */
function lineageRuns(runId: string, l: Lineage): RawBuilder<unknown> {
  return sql`select id, started_at from ${T.runs}
    where mode in ('apply', 'reconcile') and source_rows_read is not null
      and platform_key = ${l.platformKey} and options->'source' = ${JSON.stringify(l.source)}::jsonb
      and started_at < (select started_at from ${T.runs} where id = ${runId})`;
}

/**
 * The last apply or reconcile on the same platform and source that read its state completely
 * (completed, failed or interrupted: its writes are in the journal either way).
 *
 * @example
 *   const since = await previousWritingRun(db, runId, { apiUrl, source });
 */
export async function previousWritingRun(
  db: Kysely<Database>,
  runId: string,
  l: Lineage,
): Promise<Run | undefined> {
  const r = await sql<Run>`select r.* from ${T.runs} r
    where r.id in (select id from (${lineageRuns(runId, l)}) x)
      and r.status in ('completed', 'failed', 'interrupted')
    order by r.started_at desc, r.id desc limit 1`.execute(db);
  return r.rows[0];
}

/** How two runs read the platform: a listing sees every SELL_ONLY holder, other reads only theirs. */
export interface DeltaRuns {
  readonly runId: string;
  readonly sinceId: string;
  readonly runListed: boolean;
  readonly sinceListed: boolean;
  /** The earlier run listed every identity (bulk): what it did not keep, it recorded as bare. */
  readonly sinceBulk?: boolean;
}

/** The CTEs both sides of the delta need: controls after the earlier run's writes, and as read now. */
function stateCtes(d: DeltaRuns): RawBuilder<unknown> {
  const { runId: R, sinceId: P } = d;
  const gone = (run: string) => sql`
    select identity_id from ${T.f} where run_id = ${run} and finding = 'identity_not_found'
      and identity_id is not null
    union select identity_id from ${T.si} where run_id = ${run} and status = 'not_found'`;
  return sql`
    done as (
      select a.identity_id, a.action, a.control_key, a.result_control_id from ${T.a} a
      where a.status = 'succeeded' and a.run_id in (select r.id from ${T.runs} r
        left join ${T.runs} o on o.id = r.parent_run_id
        where r.started_at >= (select started_at from ${T.runs} where id = ${P})
          and r.started_at < (select started_at from ${T.runs} where id = ${R})
          -- writes to the same platform only: a revert's are its reverted run's platform's
          and coalesce(r.platform_key, o.platform_key) = (select platform_key from ${T.runs} where id = ${P}))),
    p_ctl as (
      select identity_id, control_id, case when set_by = 'unknown' then set_by_raw else upper(set_by) end as set_by,
        is_overridable
      from ${T.sc} where run_id = ${P} and type = 'SELL_ONLY' and deleted_at is null
        and control_id not in (select control_key from done where action = 'delete')
      union
      select identity_id, result_control_id, 'CLIENT', true from done
      where action = 'create' and result_control_id is not null
        and result_control_id not in (select control_key from done where action = 'delete')),
    r_ctl as (
      select identity_id, control_id, case when set_by = 'unknown' then set_by_raw else upper(set_by) end as set_by,
        is_overridable
      from ${T.sc} where run_id = ${R} and type = 'SELL_ONLY' and deleted_at is null),
    p_gone as (${gone(P)}),
    r_gone as (${gone(R)}),
    p_seen as (select identity_id from ${T.si} where run_id = ${P} and status = 'found'
      union select identity_id from p_ctl),
    r_seen as (select identity_id, observed_at from ${T.si} where run_id = ${R} and status = 'found')`;
}

/**
 * Stores the outside changes of controls and identities between the two runs' states, each marked
 * undone when it reversed a write of the tool (our control removed, a control we pruned re-added).
 * Returns the rows stored.
 */
export async function storeControlDelta(db: Kysely<Database>, d: DeltaRuns): Promise<number> {
  const { runId: R, sinceId: P } = d;
  const coveredNow = d.runListed
    ? sql`true`
    : sql`exists (select 1 from r_seen s where s.identity_id = x.identity_id)`;
  const seenThen = sql`exists (select 1 from p_seen s where s.identity_id = x.identity_id)`;
  // A complete listing read an identity it did not keep only if it recorded it as listed bare:
  // one its pages left out was not read, and no control is "added" on it.
  const coveredThen = !d.sinceListed
    ? seenThen
    : d.sinceBulk
      ? sql`(x.identity_id in (select identity_id from p_seen)
          or ${listedBare(P, sql.ref("x.identity_id"))})`
      : sql`true`;
  const notGone = (side: "p_gone" | "r_gone") =>
    sql`not exists (select 1 from ${sql.raw(side)} g where g.identity_id = x.identity_id)`;
  const r = await withHashJoins(db, (trx) =>
    sql`
    with ${stateCtes(d)},
    -- The controls added since, before the costlier question of whether the earlier run read them.
    added as materialized (select x.identity_id, x.control_id, x.set_by from r_ctl x
      where ${notGone("p_gone")}
        and not exists (select 1 from p_ctl c where c.control_id = x.control_id)),
    changes as (
      select 'control_removed' as kind, x.identity_id, x.control_id, x.set_by, null as detail from p_ctl x
      where ${coveredNow} and ${notGone("r_gone")}
        and not exists (select 1 from r_ctl c where c.control_id = x.control_id)
      union all
      select 'control_added', x.identity_id, x.control_id, x.set_by, null from added x
      where ${coveredThen}
      union all
      select 'control_changed', x.identity_id, x.control_id, x.set_by,
        'was set_by ' || c.set_by || ' is_overridable ' || c.is_overridable from r_ctl x
      join p_ctl c on c.control_id = x.control_id
      where c.set_by <> x.set_by or c.is_overridable <> x.is_overridable
      union all
      select 'identity_vanished', x.identity_id, null, null, 'the platform no longer knows this identity'
      from (select distinct identity_id from r_gone) x
      where ${notGone("p_gone")} and exists (select 1 from p_seen s where s.identity_id = x.identity_id)
      union all
      select 'identity_appeared', x.identity_id, null, null, 'the platform knows this identity again'
      from r_seen x where exists (select 1 from p_gone g where g.identity_id = x.identity_id)),
    -- Sets, not a look-up per change: no index of the journal leads with these columns.
    ours as (select result_control_id as control_id from ${T.a}
      where action = 'create' and status = 'succeeded' and result_control_id is not null
        and result_control_id in (select control_id from changes where kind = 'control_removed')),
    pruned as (select a.identity_id from ${T.a} a join ${T.runs} r on r.id = a.run_id
      where a.action = 'delete' and a.status = 'succeeded' and r.mode = 'reconcile' and r.id <> ${R}
        and a.identity_id in (select identity_id from changes where kind = 'control_added'))
    insert into ${T.w} (run_id, since_run_id, identity_id, kind, control_id, set_by, detail, undone, seen_at)
    select ${R}, ${P}, c.identity_id, c.kind, c.control_id, c.set_by, c.detail,
      case
        when c.kind = 'control_removed' then c.control_id in (select control_id from ours)
        when c.kind = 'control_added' and c.set_by = 'CLIENT'
          then c.identity_id in (select identity_id from pruned)
        else false
      end,
      coalesce(s.observed_at, now())
    -- A join, not a look-up per change: a CTE has no index, so a correlated subquery over r_seen
    -- scanned every identity the run saw once per change (287 s for 100,000 identities).
    from changes c left join r_seen s on s.identity_id = c.identity_id`.execute(trx),
  );
  return Number(r.numAffectedRows ?? 0);
}

/** A row of `world_changes` to insert. */
export interface NewWorldChange {
  readonly identity_id: string;
  readonly kind: WorldChangeKind;
  readonly set_by: string | null;
  readonly detail: string | null;
}

/** Inserts changes found outside SQL (rows looked up again in the source). */
export async function insertWorldChanges(
  db: Kysely<Database>,
  d: DeltaRuns,
  rows: readonly NewWorldChange[],
): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto(TOOL_TABLES.worldChanges)
    .values(rows.map((c) => ({ ...c, run_id: d.runId, since_run_id: d.sinceId, control_id: null })))
    .execute();
}

/** A run's outside changes by kind, and how many undid a write of the tool. */
export async function countWorldChanges(
  db: Kysely<Database>,
  runId: string,
): Promise<{ byKind: Record<string, number>; undone: number }> {
  const rows = await db
    .selectFrom(TOOL_TABLES.worldChanges)
    .select([
      "kind",
      sql<number>`count(*)::int`.as("n"),
      sql<number>`count(*) filter (where undone)::int`.as("u"),
    ])
    .where("run_id", "=", runId)
    .groupBy("kind")
    .execute();
  const byKind: Record<string, number> = {};
  let undone = 0;
  for (const r of rows) {
    byKind[r.kind] = Number(r.n);
    undone += Number(r.u);
  }
  return { byKind, undone };
}

export { lineageRuns };

/**
 * A page of a run's outside changes in a fixed order (identity, kind, control), after `after` (the
 * last row's `key` of the previous page).
 */
export async function worldChangesPage(
  db: Kysely<Database>,
  runId: string,
  after: string | null,
  limit: number,
): Promise<(WorldChange & { key: string })[]> {
  const key = sql<string>`identity_id || chr(31) || kind || chr(31) || coalesce(control_id, '')`;
  const r = await sql<WorldChange & { key: string }>`
    select *, ${key} as key from ${T.w} where run_id = ${runId}
      and (${after}::text is null or ${key} > ${after})
    order by ${key} limit ${limit}`.execute(db);
  return r.rows;
}
