/**
 * Queries of the three-way reconciliation (issue 27): listed identities whose platform legacy
 * fields are true, the control ids this tool created, and the first sightings of identities
 * awaiting the platform's own migration (`platform_wait_sightings`, migration 0008).
 */
import { type Kysely, sql } from "kysely";
import { type Database, TOOL_TABLES } from "../schema.ts";

const after = (key: string | null) => (key === null ? sql`` : sql`and si.identity_id > ${key}`);

/**
 * A keyset page of the run's snapshot identities that the platform's legacy fields mark (their
 * findings depend on those fields even when the source pass did not keep them), for a union in
 * the catch-up's page query.
 */
export function platformFlaggedPage(runId: string, afterId: string | null, limit: number) {
  return sql<{ identity_id: string }>`
    select si.identity_id from ${sql.table(TOOL_TABLES.snapshotIdentities)} si
    where si.run_id = ${runId} and (si.platform_user_disabled or si.platform_admin_disabled)
      ${after(afterId)}
    order by si.identity_id limit ${limit}`;
}

/**
 * A keyset page of the identities an earlier run read with a legacy field true that this run
 * (a complete listing) did not keep: listed with both fields false and no control, or gone. Read
 * by id, they show a field cleared on the platform (issue 50 §8).
 *
 * @example
 *   const ids = await markedThenUnkeptPage(db, runId, sinceId, null, 1000);
 */
export async function markedThenUnkeptPage(
  db: Kysely<Database>,
  runId: string,
  sinceId: string,
  afterId: string | null,
  limit: number,
): Promise<string[]> {
  const r = await sql<{ identity_id: string }>`
    select si.identity_id from ${sql.table(TOOL_TABLES.snapshotIdentities)} si
    where si.run_id = ${sinceId} and si.status = 'found'
      and (si.platform_user_disabled or si.platform_admin_disabled) ${after(afterId)}
      and not exists (select 1 from ${sql.table(TOOL_TABLES.snapshotIdentities)} n
        where n.run_id = ${runId} and n.identity_id = si.identity_id)
    order by si.identity_id limit ${limit}`.execute(db);
  return r.rows.map((x) => x.identity_id);
}

/**
 * Of some identities, the control ids this tool created (in any run, from the journal's
 * outcomes): `--prune` deletes those first among duplicates.
 *
 * @example
 *   const mine = await toolCreatedControls(db, ["id-1"]); // Set { "ctl-9" }
 */
export async function toolCreatedControls(
  db: Kysely<Database>,
  identityIds: readonly string[],
): Promise<Set<string>> {
  if (identityIds.length === 0) return new Set();
  const r = await sql<{ result_control_id: string }>`
    select a.result_control_id from ${sql.table(TOOL_TABLES.actions)} a
    where a.identity_id = any(${[...identityIds]}::text[]) and a.action = 'create'
      and a.result_control_id is not null`.execute(db);
  return new Set(r.rows.map((x) => x.result_control_id));
}

/** The platform key of a run (`runs.platform_key`, 0014), '' for a run that recorded none. */
const runPlatform = (runId: string) =>
  sql`(select coalesce(r.platform_key, '') from ${sql.table(TOOL_TABLES.runs)} r where r.id = ${runId})`;

/** A batch's identities awaiting the platform's migration, by the legacy flag it would migrate. */
export interface AwaitingIds {
  readonly user_disabled: readonly string[];
  readonly admin_disabled: readonly string[];
}

/**
 * Records, in one statement, the first sighting of identities awaiting the platform's migration
 * on either side (kept when already recorded) and, with `waitS` given, returns the user_disabled
 * ones whose first sighting is older than `waitS` seconds, by the database's clock. Sightings
 * belong to the run's platform (`runs.platform_key`): another platform's never count.
 *
 * @example
 *   const due = await sightAwaiting(db, runId, { user_disabled: ids, admin_disabled: [] }, 3600);
 */
export async function sightAwaiting(
  db: Kysely<Database>,
  runId: string,
  ids: AwaitingIds,
  waitS: number | null,
): Promise<Set<string>> {
  if (ids.user_disabled.length + ids.admin_disabled.length === 0) return new Set();
  const [user, admin] = [[...ids.user_disabled], [...ids.admin_disabled]];
  const insert = (flag: string, list: readonly string[]) => sql`
    insert into ${sql.table(TOOL_TABLES.platformWaitSightings)} (platform_key, identity_id, flag, run_id)
    select key.k, u.id, ${flag}, ${runId} from key, unnest(${list}::text[]) as u(id)
    where key.k <> ''
    on conflict (platform_key, identity_id, flag) do nothing
    returning identity_id`;
  // The main query sees the table as it was before the statement: a sighting made now is never due.
  const due =
    waitS === null || user.length === 0
      ? sql`select null::text as identity_id where false`
      : sql`select w.identity_id from ${sql.table(TOOL_TABLES.platformWaitSightings)} w, key
          where w.platform_key = key.k and key.k <> ''
            and w.flag = 'user_disabled' and w.identity_id = any(${user}::text[])
            and w.first_seen_at < now() - make_interval(secs => ${waitS})
            and not exists (select 1 from seen where seen.identity_id = w.identity_id)`;
  const r = await sql<{ identity_id: string }>`
    with key as (select ${runPlatform(runId)} as k),
    seen_admin as (${insert("admin_disabled", admin)}),
    seen as (${insert("user_disabled", user)})
    ${due}`.execute(db);
  return new Set(r.rows.map((x) => x.identity_id));
}

/**
 * Forgets, in one statement, the sightings on the run's platform of identities a batch found no
 * longer awaiting on a side (in sync, migrated, or the flag cleared), so a later return starts a
 * fresh wait.
 */
export async function forgetNotAwaiting(
  db: Kysely<Database>,
  runId: string,
  ids: AwaitingIds,
): Promise<void> {
  if (ids.user_disabled.length === 0 && ids.admin_disabled.length === 0) return;
  // One delete a side, each an index scan on (platform_key, identity_id = any, flag): the two
  // sides joined by `or` made it a scan of every sighting of the platform for each batch, 88 ms
  // a batch once a 1,000,000-identity plan had recorded 60,000 of them.
  const side = (flag: string, list: readonly string[]) => sql`
    delete from ${sql.table(TOOL_TABLES.platformWaitSightings)} w using key
    where w.platform_key = key.k and w.flag = ${flag} and w.identity_id = any(${[...list]}::text[])`;
  await sql`with key as (select ${runPlatform(runId)} as k),
    u as (${side("user_disabled", ids.user_disabled)}),
    a as (${side("admin_disabled", ids.admin_disabled)})
    select 1`.execute(db);
}

/**
 * Forgets the first sightings whose identity's source flag this run's complete source pass found
 * not true (its flag cleared, the row gone, or invalid): an identity can await the platform only
 * with its flag true here. Such an identity is often in no classified batch (its flag cleared and
 * the platform's legacy field too, with no control, it is neither a candidate nor kept from the
 * listing), so `forgetNotAwaiting` never sees it. Only sightings on the run's platform
 * (`platform_key`) made by runs of the same source (`runs.options`' `source`). Returns how many
 * were forgotten.
 *
 * @example
 *   const forgotten = await forgetSightingsOffSource(db, runId);
 */
export async function forgetSightingsOffSource(
  db: Kysely<Database>,
  runId: string,
): Promise<number> {
  const r = await sql`
    delete from ${sql.table(TOOL_TABLES.platformWaitSightings)} w
    using ${sql.table(TOOL_TABLES.runs)} me, ${sql.table(TOOL_TABLES.runs)} seen
    where me.id = ${runId} and seen.id = w.run_id
      and w.platform_key = coalesce(me.platform_key, '')
      and seen.options->'source' is not distinct from me.options->'source'
      and not exists (
        select 1 from ${sql.table(TOOL_TABLES.sourceRows)} s
        where s.run_id = ${runId} and s.identity_id = w.identity_id
          and (case when w.flag = 'user_disabled' then s.user_disabled else s.admin_disabled end))
  `.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

/** Whether any first sighting is recorded (one index probe). */
export async function anySightings(db: Kysely<Database>): Promise<boolean> {
  const r = await sql<{ any: boolean }>`select exists (
    select 1 from ${sql.table(TOOL_TABLES.platformWaitSightings)}) as any`.execute(db);
  return r.rows[0]?.any === true;
}

/** A run's findings counted by their three-way cell: L (source), P (platform field), finding. */
export interface ThreeWayCell {
  readonly flag: "user_disabled" | "admin_disabled";
  readonly source: boolean | null;
  readonly platform: boolean | null;
  readonly finding: string;
  readonly n: number;
}

/**
 * The three-way table of a run: its findings counted per flag, source value, platform value and
 * finding. One grouped query over the run's findings (index `(run_id, finding)`).
 */
export async function threeWayCells(db: Kysely<Database>, runId: string): Promise<ThreeWayCell[]> {
  const r = await sql<Omit<ThreeWayCell, "n"> & { n: string | number }>`
    select x.side as flag,
           case when x.side = 'admin_disabled' then x.admin_disabled else x.user_disabled end as source,
           case when x.side = 'admin_disabled' then x.platform_admin_disabled
                else x.platform_user_disabled end as platform,
           x.finding, count(*) as n
    from (select f.*,
            case when f.expected_set_by = 'SERVICE'
                   or (f.expected_set_by is null and f.observed_set_by in ('SERVICE', 'SET_BY_SERVICE'))
                   or f.finding in ('platform_unaware_of_admin_flag', 'source_behind_platform')
                 then 'admin_disabled' else 'user_disabled' end as side
          from ${sql.table(TOOL_TABLES.findings)} f
          where f.run_id = ${runId} and f.finding not in ('invalid_source_row', 'source_warning')
            and (f.platform_user_disabled is not null or f.platform_admin_disabled is not null)) x
    group by 1, 2, 3, 4 order by 1, 2, 3, 4`.execute(db);
  return r.rows.map((x) => ({ ...x, n: Number(x.n) }));
}

/**
 * The pending creates of a run made for identities awaiting the platform's own migration whose
 * wait expired (`--wait-for-platform-s`): each is read again right before it is sent.
 */
export async function awaitedCreateIds(db: Kysely<Database>, runId: string): Promise<Set<number>> {
  const r = await sql<{ id: number | string }>`
    select a.id from ${sql.table(TOOL_TABLES.actions)} a
    join ${sql.table(TOOL_TABLES.findings)} f on f.id = a.finding_id
    where a.run_id = ${runId} and a.action = 'create' and a.status = 'pending'
      and f.finding = 'awaiting_platform_migration'`.execute(db);
  return new Set(r.rows.map((x) => Number(x.id)));
}
