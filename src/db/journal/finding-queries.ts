import { type Kysely, type RawBuilder, sql } from "kysely";
import { type Database, TOOL_TABLES } from "../schema.ts";
import { withKeyLookups } from "./key-lookups.ts";
import { platformFlaggedPage } from "./three-way-queries.ts";

export interface IdentityStateRow {
  identity_id: string;
  user_disabled: boolean | null;
  admin_disabled: boolean | null;
  has_source: boolean;
  status: "found" | "not_found" | "error" | null;
  error: string | null;
  /** The platform's legacy fields as listed with the identity (0008); null: not read. */
  platform_user_disabled: boolean | null;
  platform_admin_disabled: boolean | null;
  controls: {
    control_id: string;
    type: string;
    set_by: string;
    set_by_raw: string;
    is_overridable: boolean;
  }[];
}

/** A valid source row the findings stage looks at: a flag true, or looked up by id (seq < 0). */
const CANDIDATE = sql`s.valid and s.identity_id is not null and (s.user_disabled or s.admin_disabled or s.seq < 0)`;

/** Findings that come from the join (not the reader's own: those are inserted apart, first). */
const CLASSIFIED = sql`f.finding not in ('invalid_source_row', 'source_warning')`;

/**
 * The join source ⟗ snapshot for the identity ids of the CTE `ids`: each with its flags (the
 * lowest-seq valid source row) and its active controls as JSON, in identity order.
 */
function statesOf(runId: string, ids: RawBuilder<unknown>) {
  return sql<IdentityStateRow>`
    with ids as (${ids})
    select ids.identity_id,
      s.user_disabled, s.admin_disabled, (s.identity_id is not null) as has_source,
      si.status, si.error, si.platform_user_disabled, si.platform_admin_disabled,
      coalesce((
        select json_agg(json_build_object('control_id', c.control_id, 'type', c.type, 'set_by', c.set_by,
                                          'set_by_raw', c.set_by_raw, 'is_overridable', c.is_overridable)
                        order by c.control_id)
        from ${sql.table(TOOL_TABLES.snapshotControls)} c
        where c.run_id = ${runId} and c.identity_id = ids.identity_id and c.deleted_at is null
      ), '[]'::json) as controls
    from ids
    left join lateral (
      select * from ${sql.table(TOOL_TABLES.sourceRows)} s
      where s.run_id = ${runId} and s.identity_id = ids.identity_id and s.valid
      order by s.seq limit 1
    ) s on true
    left join ${sql.table(TOOL_TABLES.snapshotIdentities)} si
      on si.run_id = ${runId} and si.identity_id = ids.identity_id
    order by ids.identity_id
  `;
}

const parsed = (rows: IdentityStateRow[]): IdentityStateRow[] =>
  rows.map((row) => ({
    ...row,
    controls: typeof row.controls === "string" ? JSON.parse(row.controls) : row.controls,
  }));

const after = (column: RawBuilder<unknown>, key: string | null) =>
  key === null ? sql`` : sql`and ${column} > ${key}`;

/** One keyset page of the run's valid candidates after `afterId` that a listing page held. */
function candidatesPage(runId: string, afterId: string | null, limit: number) {
  // The bound is repeated on si: without it PostgreSQL's merge join reads the snapshot's index from
  // the run's first identity on every page (135 ms a page at 1,000,000 identities; 12 ms with it).
  const held = sql`exists (select 1 from ${sql.table(TOOL_TABLES.snapshotIdentities)} si
                           where si.run_id = s.run_id and si.identity_id = s.identity_id
                             ${after(sql.ref("si.identity_id"), afterId)})`;
  return sql<{ identity_id: string }>`
    select distinct s.identity_id from ${sql.table(TOOL_TABLES.sourceRows)} s
    where s.run_id = ${runId} and ${CANDIDATE} ${after(sql.ref("s.identity_id"), afterId)}
      and ${held}
    order by s.identity_id limit ${limit}`;
}

/**
 * One page of the join source ⟗ snapshot, keyed by identity id: every valid source candidate and
 * every observed identity holding a SELL_ONLY, with its flags and its active controls as JSON.
 * Each side of the union is limited before it is merged, so a page costs its own size, not the
 * rest of the run.
 *
 * @example
 *   const rows = await identityStatesPage(db, runId, null, 1000);
 */
export async function identityStatesPage(
  db: Kysely<Database>,
  runId: string,
  afterId: string | null,
  limit: number,
): Promise<IdentityStateRow[]> {
  const ids = sql`
    select identity_id from (
      (select s.identity_id from ${sql.table(TOOL_TABLES.sourceRows)} s
       where s.run_id = ${runId} and ${CANDIDATE} ${after(sql.ref("s.identity_id"), afterId)}
       order by s.identity_id limit ${limit})
      union
      (select c.identity_id from ${sql.table(TOOL_TABLES.snapshotControls)} c
       where c.run_id = ${runId} and c.type = 'SELL_ONLY' ${after(sql.ref("c.identity_id"), afterId)}
       order by c.identity_id limit ${limit})
    ) u order by identity_id limit ${limit}`;
  const r = await statesOf(runId, ids).execute(db);
  return parsed(r.rows);
}

/** What a run stored of one observed identity: its status and its active controls. */
export type StoredObservation = Pick<
  IdentityStateRow,
  | "identity_id"
  | "status"
  | "error"
  | "controls"
  | "platform_user_disabled"
  | "platform_admin_disabled"
>;

/**
 * What the run's snapshot holds of some identities (those it holds), skipping any already
 * classified in this run. Both lookups go by `= any` on the `(run_id, identity_id)` keys with
 * sequential scans off (`withKeyLookups`), an index descent per id whatever the run's size: a join
 * here let PostgreSQL hash the run's whole findings or source rows for every range, and PGlite,
 * without statistics, scanned the run's snapshot for every range.
 *
 * @example
 *   const rows = await unclassifiedObservations(db, runId, ids);
 */
export async function unclassifiedObservations(
  db: Kysely<Database>,
  runId: string,
  identityIds: readonly string[],
): Promise<StoredObservation[]> {
  if (identityIds.length === 0) return [];
  const ids = [...identityIds];
  const done = await withKeyLookups(db, (trx) =>
    sql<{ identity_id: string }>`
      select distinct f.identity_id from ${sql.table(TOOL_TABLES.findings)} f
      where f.run_id = ${runId} and f.identity_id = any(${ids}::text[]) and ${CLASSIFIED}`.execute(
      trx,
    ),
  );
  const skip = new Set(done.rows.map((r) => r.identity_id));
  const wanted = skip.size === 0 ? ids : ids.filter((id) => !skip.has(id));
  if (wanted.length === 0) return [];
  const statement = sql<StoredObservation>`
    select si.identity_id, si.status, si.error, si.platform_user_disabled, si.platform_admin_disabled,
      coalesce((
        select json_agg(json_build_object('control_id', c.control_id, 'type', c.type, 'set_by', c.set_by,
                                          'set_by_raw', c.set_by_raw, 'is_overridable', c.is_overridable)
                        order by c.control_id)
        from ${sql.table(TOOL_TABLES.snapshotControls)} c
        where c.run_id = si.run_id and c.identity_id = si.identity_id and c.deleted_at is null
      ), '[]'::json) as controls
    from ${sql.table(TOOL_TABLES.snapshotIdentities)} si
    where si.run_id = ${runId} and si.identity_id = any(${wanted}::text[])
    order by si.identity_id`;
  const r = await withKeyLookups(db, (trx) => statement.execute(trx));
  return r.rows.map((row) => ({
    ...row,
    controls: typeof row.controls === "string" ? JSON.parse(row.controls) : row.controls,
  }));
}

/**
 * Listed identities the findings stage looks at (a listed valid candidate, or holding a SELL_ONLY),
 * in identity order after `afterId` (keyset): what a listing stored before the source pass was
 * complete, caught up once it is.
 *
 * @example
 *   const ids = await listedInterestingPage(db, runId, null, 1000);
 */
export async function listedInterestingPage(
  db: Kysely<Database>,
  runId: string,
  afterId: string | null,
  limit: number,
): Promise<string[]> {
  const r = await sql<{ identity_id: string }>`
    select identity_id from (
      (${candidatesPage(runId, afterId, limit)})
      union
      (select c.identity_id from ${sql.table(TOOL_TABLES.snapshotControls)} c
       where c.run_id = ${runId} and c.type = 'SELL_ONLY' ${after(sql.ref("c.identity_id"), afterId)}
       order by c.identity_id limit ${limit})
      union
      (${platformFlaggedPage(runId, afterId, limit)})
    ) u order by identity_id limit ${limit}
  `.execute(db);
  return r.rows.map((x) => x.identity_id);
}

/**
 * Invalid source rows (and warnings on kept rows) become findings straight from SQL.
 *
 * @example
 *   await insertInvalidRowFindings(db, runId);
 */
export async function insertInvalidRowFindings(db: Kysely<Database>, runId: string): Promise<void> {
  // Each statement inserts all of its rows or none, and is skipped when they are already there:
  // run again after a lost connection, it never doubles the findings.
  await sql`
    insert into ${sql.table(TOOL_TABLES.findings)} (run_id, identity_id, finding, user_disabled, admin_disabled, detail)
    select run_id, identity_id, 'invalid_source_row', user_disabled, admin_disabled,
           anomaly || coalesce(': ' || anomaly_detail, '')
    from ${sql.table(TOOL_TABLES.sourceRows)}
    where run_id = ${runId} and anomaly is not null and valid is not true
      and not exists (select 1 from controls_migration.findings
                      where run_id = ${runId} and finding = 'invalid_source_row')
    order by seq
  `.execute(db);
  // Rows kept despite a warning (a non-UUID id under --non-uuid-ids warn) are reported too.
  await sql`
    insert into ${sql.table(TOOL_TABLES.findings)} (run_id, identity_id, finding, user_disabled, admin_disabled, detail)
    select run_id, identity_id, 'source_warning', user_disabled, admin_disabled,
           anomaly || coalesce(': ' || anomaly_detail, '')
    from ${sql.table(TOOL_TABLES.sourceRows)}
    where run_id = ${runId} and anomaly is not null and valid and seq > 0
      and not exists (select 1 from controls_migration.findings
                      where run_id = ${runId} and finding = 'source_warning')
    order by seq
  `.execute(db);
}

/**
 * A run's findings counted by kind.
 *
 * @example
 *   await countFindings(db, runId) // { in_sync: 900, missing_client_control: 100 }
 */
export async function countFindings(
  db: Kysely<Database>,
  runId: string,
): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom(TOOL_TABLES.findings)
    .select(["finding", db.fn.countAll<number>().as("n")])
    .where("run_id", "=", runId)
    .groupBy("finding")
    .execute();
  return Object.fromEntries(rows.map((r) => [r.finding, Number(r.n)]));
}

/**
 * Findings that appear in `runId` but not in `previousRunId` (new) and the reverse (resolved).
 *
 * @example
 *   const { newFindings, resolvedFindings } = await findingChanges(db, runId, prev.id);
 */
export async function findingChanges(
  db: Kysely<Database>,
  runId: string,
  previousRunId: string,
): Promise<{ newFindings: number; resolvedFindings: number }> {
  const key = (id: string) => sql`
    select coalesce(identity_id, '') as i, finding as f, coalesce(expected_set_by, observed_set_by, '') as k
    from ${sql.table(TOOL_TABLES.findings)} where run_id = ${id} and finding <> 'in_sync'`;
  const count = async (a: string, b: string) => {
    const r = await sql<{
      n: number;
    }>`select count(*)::int as n from (${key(a)} except ${key(b)}) d`.execute(db);
    return Number(r.rows[0]?.n ?? 0);
  };
  return {
    newFindings: await count(runId, previousRunId),
    resolvedFindings: await count(previousRunId, runId),
  };
}

/**
 * The most frequent reason a run's reads failed (a `read_failed` finding's detail), or null.
 *
 * @example
 *   await commonReadFailure(db, runId) // "POST /oauth2/token: 503 Service Unavailable: ..."
 */
export async function commonReadFailure(
  db: Kysely<Database>,
  runId: string,
): Promise<string | null> {
  const row = await db
    .selectFrom(TOOL_TABLES.findings)
    .select(["detail", db.fn.countAll<number>().as("n")])
    .where("run_id", "=", runId)
    .where("finding", "=", "read_failed")
    .groupBy("detail")
    .orderBy("n", "desc")
    .limit(1)
    .executeTakeFirst();
  return row?.detail ?? null;
}
