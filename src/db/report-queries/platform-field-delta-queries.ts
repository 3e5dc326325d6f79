/**
 * The platform's legacy fields as a change kind (issue 50 §8): `user_disabled`/`admin_disabled`
 * set or cleared on the platform between the previous writing run's read and this one's, over the
 * identities both runs read those fields of (a complete listing keeps every identity whose field
 * is true and records those it listed bare, both false). The tool never writes them: every such
 * change is outside. Stored in
 * `world_changes` beside the other kinds.
 */
import { type Kysely, sql } from "kysely";
import type { Database } from "../schema.ts";
import { T } from "../table-refs.ts";
import { withHashJoins } from "./hash-joins.ts";
import { listedBare } from "./listed-bare-sql.ts";
import type { DeltaRuns } from "./world-delta-queries.ts";

/**
 * Stores `platform_field_set` and `platform_field_cleared` changes (set_by: the field's owner,
 * CLIENT for user_disabled, SERVICE for admin_disabled; detail: the field). Returns the rows stored.
 *
 * @example
 *   await storePlatformFieldDelta(db, { runId, sinceId, runListed: true, sinceListed: true });
 */
export async function storePlatformFieldDelta(db: Kysely<Database>, d: DeltaRuns): Promise<number> {
  const r = await withHashJoins(db, (trx) =>
    sql`
    with unkept as materialized (
      -- Restricted now, not kept by the earlier complete listing: few, found first (hashed), so
      -- that the costlier question below is asked of them only, not of every identity.
      select n.identity_id, n.platform_user_disabled, n.platform_admin_disabled from ${T.si} n
      where n.run_id = ${d.runId} and n.status = 'found'
        and (n.platform_user_disabled or n.platform_admin_disabled)
        and exists (select 1 from ${T.runs} r where r.id = ${d.sinceId} and r.strategy = 'bulk')
        and not exists (select 1 from ${T.si} p where p.run_id = ${d.sinceId}
          and p.identity_id = n.identity_id)),
    pairs as (
      select n.identity_id, p.platform_user_disabled as pu, n.platform_user_disabled as nu,
        p.platform_admin_disabled as pa, n.platform_admin_disabled as na
      from ${T.si} n join ${T.si} p on p.identity_id = n.identity_id and p.run_id = ${d.sinceId}
      where n.run_id = ${d.runId} and n.status = 'found' and p.status = 'found'
      union all
      -- A complete listing keeps every identity whose field is true: one it recorded as listed
      -- bare had both fields false (and no control). One it neither kept nor recorded, it never
      -- read (left out of its pages): no change is concluded from it.
      select u.identity_id, false, u.platform_user_disabled, false, u.platform_admin_disabled
      from unkept u where ${listedBare(d.sinceId, sql.ref("u.identity_id"))}),
    changes as (
      select identity_id, case when nu then 'platform_field_set' else 'platform_field_cleared' end
        as kind, 'CLIENT' as set_by, 'user_disabled' as detail
      from pairs where pu is not null and nu is not null and pu <> nu
      union all
      select identity_id, case when na then 'platform_field_set' else 'platform_field_cleared' end,
        'SERVICE', 'admin_disabled'
      from pairs where pa is not null and na is not null and pa <> na)
    insert into ${T.w} (run_id, since_run_id, identity_id, kind, set_by, detail, seen_at)
    select ${d.runId}, ${d.sinceId}, identity_id, kind, set_by, detail, now() from changes`.execute(
      trx,
    ),
  );
  return Number(r.numAffectedRows ?? 0);
}
