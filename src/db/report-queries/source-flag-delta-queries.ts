/**
 * The source side of the world's delta (0009): the flags that changed on rows both runs hold, and
 * the flagged rows only the later run holds, stored in `world_changes` beside the platform's side
 * (`world-delta-queries.ts`, `platform-field-delta-queries.ts`).
 */
import { type Kysely, sql } from "kysely";
import { type Database, TOOL_SCHEMA } from "../schema.ts";
import { idHash } from "../source/source-id-set-queries.ts";
import { T as TABLES } from "../table-refs.ts";
import { withHashJoins } from "./hash-joins.ts";
import type { DeltaRuns } from "./world-delta-queries.ts";

const T = { ...TABLES, ids: sql.table(`${TOOL_SCHEMA}.source_ids`) };

/** Valid source flags of a run, per identity. */
const flagsOf = (run: string) => sql`
  select identity_id, bool_or(user_disabled) as u, bool_or(admin_disabled) as a from ${T.src}
  where run_id = ${run} and valid and identity_id is not null group by identity_id`;

/**
 * Stores the flags that changed on rows both runs hold, and the flagged rows only this run holds.
 * The earlier run kept no clean rows, so a row it never stored was clean or absent then: with the
 * source's id set as the earlier run read it (`idSet`, source-id-set-queries.ts), a row whose id
 * was not in it is `source_row_added`, else `flag_set`; without one, only an identity the earlier
 * run looked up and found no row for is `source_row_added`.
 */
export async function storeFlagDelta(
  db: Kysely<Database>,
  d: DeltaRuns,
  idSet: number | undefined,
): Promise<number> {
  const { runId: R, sinceId: P } = d;
  const absentThen =
    idSet === undefined
      ? sql`false`
      : sql`not exists (select 1 from ${T.ids} x where x.set_id = ${idSet}
          and x.h = ${idHash(sql.ref("rs.identity_id"))})`;
  const r = await withHashJoins(db, (trx) =>
    sql`
    with ps as (${flagsOf(P)}), rs as (${flagsOf(R)}),
    pairs as (
      select rs.identity_id, ps.u as pu, ps.a as pa, rs.u as ru, rs.a as ra,
        ps.identity_id is null and (${absentThen} or exists (select 1 from ${T.f} f where f.run_id = ${P}
          and f.identity_id = rs.identity_id and f.finding in ('unknown_to_source', 'orphaned_own_control'))) as added
      from rs left join ps on ps.identity_id = rs.identity_id),
    changes as (
      select identity_id, 'source_row_added' as kind, null as set_by,
        'user_disabled ' || ru || ', admin_disabled ' || ra as detail from pairs where added and (ru or ra)
      union all
      select identity_id, case when ru then 'flag_set' else 'flag_cleared' end, 'CLIENT', 'user_disabled'
      from pairs where not added and coalesce(pu, false) <> ru
      union all
      select identity_id, case when ra then 'flag_set' else 'flag_cleared' end, 'SERVICE', 'admin_disabled'
      from pairs where not added and coalesce(pa, false) <> ra)
    insert into ${T.w} (run_id, since_run_id, identity_id, kind, set_by, detail, seen_at)
    select ${R}, ${P}, identity_id, kind, set_by, detail, now() from changes`.execute(trx),
  );
  return Number(r.numAffectedRows ?? 0);
}

/** A page of identities the earlier run held a valid source row for and this run does not. */
export async function rowsOnlyThenPage(
  db: Kysely<Database>,
  d: DeltaRuns,
  after: string | null,
  limit: number,
): Promise<{ identity_id: string; u: boolean; a: boolean }[]> {
  const r = await sql<{ identity_id: string; u: boolean; a: boolean }>`
    with ps as (${flagsOf(d.sinceId)})
    select ps.identity_id, ps.u, ps.a from ps
    where not exists (select 1 from ${T.src} s where s.run_id = ${d.runId} and s.identity_id = ps.identity_id)
      and (${after}::text is null or ps.identity_id > ${after})
    order by ps.identity_id limit ${limit}`.execute(db);
  return r.rows;
}
