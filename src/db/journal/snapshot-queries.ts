import { type Kysely, type RawBuilder, sql } from "kysely";
import {
  type Database,
  type NewSnapshotControl,
  type NewSnapshotIdentity,
  type NewSourceRow,
  TOOL_TABLES,
} from "../schema.ts";
import { chainWrites, type UnnestType, unnestInsert } from "./unnest-insert.ts";

/**
 * Inserts snapshot rows in one transaction; re-observing an identity in the same run replaces it,
 * so the rows can be written again after a lost connection. How it was first observed
 * (`observed_via`: listed, or read by id) stays: a read by id after a listing does not unlist it.
 *
 * @example
 *   await insertSnapshot(db, [{ run_id, identity_id, status: "found", error: null }], controls);
 */
export async function insertSnapshot(
  db: Kysely<Database>,
  identities: NewSnapshotIdentity[],
  controls: NewSnapshotControl[],
): Promise<void> {
  if (identities.length + controls.length === 0) return;
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < Math.max(identities.length, controls.length); i += CHUNK) {
      await chainWrites(
        snapshotWrites(identities.slice(i, i + CHUNK), controls.slice(i, i + CHUNK)),
      )?.execute(trx);
    }
  });
}

/**
 * The statements that store some observed identities and their controls (at most a few thousand
 * rows: one listing page or one catch-up range), to be chained with other writes of the same
 * transaction (`chainWrites`). Idempotent, like `insertSnapshot`.
 *
 * @example
 *   const writes = snapshotWrites(identities, controls);
 */
export function snapshotWrites(
  identities: readonly NewSnapshotIdentity[],
  controls: readonly NewSnapshotControl[],
): RawBuilder<unknown>[] {
  const writes: RawBuilder<unknown>[] = [];
  if (identities.length > 0) {
    writes.push(sql`${unnestInsert(TOOL_TABLES.snapshotIdentities, IDENTITY_COLUMNS, identities)}
      on conflict (run_id, identity_id) do update
      set status = excluded.status, error = excluded.error, observed_at = excluded.observed_at,
        platform_user_disabled = excluded.platform_user_disabled,
        platform_admin_disabled = excluded.platform_admin_disabled,
        observed_via = coalesce(snapshot_identities.observed_via, excluded.observed_via)`);
  }
  if (controls.length > 0) {
    writes.push(sql`${unnestInsert(TOOL_TABLES.snapshotControls, CONTROL_COLUMNS, controls)}
      on conflict (run_id, control_id) do nothing`);
  }
  return writes;
}

/** Rows a statement: arrays cost one parameter a column, so the chunk is only a memory bound. */
const CHUNK = 5000;

const IDENTITY_COLUMNS = {
  run_id: "text",
  identity_id: "text",
  status: "text",
  error: "text",
  platform_user_disabled: "bool",
  platform_admin_disabled: "bool",
  observed_via: "text",
} as const satisfies Partial<Record<keyof NewSnapshotIdentity, UnnestType>>;

const CONTROL_COLUMNS = {
  run_id: "text",
  identity_id: "text",
  control_id: "text",
  type: "text",
  set_by: "text",
  set_by_raw: "text",
  is_overridable: "bool",
  reason_code: "text",
  reason: "text",
  created_at: "timestamptz",
  deleted_at: "timestamptz",
} as const satisfies Partial<Record<keyof NewSnapshotControl, UnnestType>>;

const SOURCE_COLUMNS = {
  run_id: "text",
  seq: "int4",
  identity_id: "text",
  user_disabled: "bool",
  admin_disabled: "bool",
  anomaly: "text",
  anomaly_detail: "text",
  valid: "bool",
} as const satisfies Partial<Record<keyof NewSourceRow, UnnestType>>;

/**
 * The statement that puts listed identities aside in `listed_identities` (a bare heap), until the
 * run's source rows are stored and `moveListedToSnapshot` keeps those the source holds; chained
 * with the page's other writes. Sent again after a lost answer it stages an id twice, which the
 * move's `distinct` absorbs.
 *
 * @example
 *   const write = stageWrite(page.map((i) => ({ run_id: runId, identity_id: i.id })));
 */
export function stageWrite(
  rows: readonly Pick<NewSnapshotIdentity, "run_id" | "identity_id">[],
): RawBuilder<unknown> | null {
  return rows.length === 0
    ? null
    : unnestInsert(TOOL_TABLES.listedIdentities, LISTED_COLUMNS, rows);
}

/**
 * The run's staged identities that its source rows hold become `found` snapshot identities; the
 * run's staged rows are then deleted (with any a crashed run left). One transaction.
 *
 * @example
 *   const moved = await moveListedToSnapshot(db, runId);
 */
export async function moveListedToSnapshot(db: Kysely<Database>, runId: string): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const r = await sql`
      insert into ${sql.table(TOOL_TABLES.snapshotIdentities)}
        (run_id, identity_id, status, error, observed_via)
      select distinct l.run_id, l.identity_id, 'found', null::text, 'listing'
      from ${sql.table(TOOL_TABLES.listedIdentities)} l
      where l.run_id = ${runId}
        and exists (select 1 from ${sql.table(TOOL_TABLES.sourceRows)} s
                    where s.run_id = l.run_id and s.identity_id = l.identity_id)
      on conflict (run_id, identity_id) do nothing`.execute(trx);
    await sql`
      delete from ${sql.table(TOOL_TABLES.listedIdentities)} l
      where l.run_id = ${runId}
         or not exists (select 1 from ${sql.table(TOOL_TABLES.runs)} r
                        where r.id = l.run_id and r.status = 'running')`.execute(trx);
    return Number(r.numAffectedRows ?? 0);
  });
}

const LISTED_COLUMNS = { run_id: "text", identity_id: "text" } as const;

/**
 * Forgets what was observed of some identities, before observing them again.
 *
 * @example
 *   await clearSnapshotOf(db, runId, ids);
 */
export async function clearSnapshotOf(
  db: Kysely<Database>,
  runId: string,
  identityIds: string[],
): Promise<void> {
  if (identityIds.length === 0) return;
  await db
    .deleteFrom(TOOL_TABLES.snapshotControls)
    .where("run_id", "=", runId)
    .where("identity_id", "in", identityIds)
    .execute();
}

/**
 * Stores source rows; a row already stored (same run and seq) is left as it is.
 *
 * @example
 *   await insertSourceRows(db, [{ run_id, seq: 1, identity_id, user_disabled: true, ... }]);
 */
export async function insertSourceRows(db: Kysely<Database>, rows: NewSourceRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    // Idempotent, so a batch whose answer a lost connection swallowed can be sent again.
    await sql`${unnestInsert(TOOL_TABLES.sourceRows, SOURCE_COLUMNS, rows.slice(i, i + CHUNK))}
      on conflict (run_id, seq) do nothing`.execute(db);
  }
}

/**
 * Valid candidates of a run (a flag true), in identity order after `after` (keyset).
 *
 * @example
 *   const ids = await candidatePage(db, runId, null, 1000);
 */
export async function candidatePage(
  db: Kysely<Database>,
  runId: string,
  after: string | null,
  limit: number,
): Promise<string[]> {
  let q = db
    .selectFrom(TOOL_TABLES.sourceRows)
    .select("identity_id")
    .where("run_id", "=", runId)
    .where("valid", "=", true)
    .where("identity_id", "is not", null)
    .where((eb) =>
      eb.or([eb("user_disabled", "=", true), eb("admin_disabled", "=", true), eb("seq", "<", 0)]),
    );
  if (after !== null) q = q.where("identity_id", ">", after);
  const rows = await q.orderBy("identity_id").limit(limit).execute();
  return rows.map((r) => r.identity_id as string);
}

/**
 * Distinct valid candidates of a run (a flag true, or looked up by id).
 *
 * @example
 *   const n = await countCandidates(db, runId);
 */
export async function countCandidates(db: Kysely<Database>, runId: string): Promise<number> {
  const r = await db
    .selectFrom(TOOL_TABLES.sourceRows)
    .select(db.fn.count<number>("identity_id").distinct().as("n"))
    .where("run_id", "=", runId)
    .where("valid", "=", true)
    .where((eb) =>
      eb.or([eb("user_disabled", "=", true), eb("admin_disabled", "=", true), eb("seq", "<", 0)]),
    )
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/**
 * The lowest `seq` of a run's looked-up rows (0 when none): the next one takes the number below.
 *
 * @example
 *   let seq = await maxLookupSeq(db, runId); // then seq -= 1 per looked-up row
 */
export async function maxLookupSeq(db: Kysely<Database>, runId: string): Promise<number> {
  const r = await db
    .selectFrom(TOOL_TABLES.sourceRows)
    .select(db.fn.min<number>("seq").as("m"))
    .where("run_id", "=", runId)
    .executeTakeFirst();
  return Math.min(0, Number(r?.m ?? 0));
}

const RUN_TABLES = {
  source: TOOL_TABLES.sourceRows,
  snapshot: [TOOL_TABLES.snapshotIdentities, TOOL_TABLES.snapshotControls],
  journal: [TOOL_TABLES.findings, TOOL_TABLES.actions],
} as const;

/**
 * Refreshes the planner's statistics after a stage loads a run's rows. Without it PostgreSQL
 * still believes a table holds the previous run's handful of rows and picks nested loops that
 * rescan a whole run per row: a second plan on one database went from 5 s to 113 s at 100k.
 *
 * @example
 *   await analyzeRunTables(db, "snapshot");
 */
export async function analyzeRunTables(
  db: Kysely<Database>,
  which: keyof typeof RUN_TABLES,
): Promise<void> {
  const tables = RUN_TABLES[which];
  for (const t of typeof tables === "string" ? [tables] : tables) {
    await sql`analyze ${sql.table(t)}`.execute(db);
  }
}

/** One earlier run's listing figures, as its summary.json recorded them. */
export interface PreviousListing {
  readonly runId: string;
  readonly listing: Record<string, unknown>;
}

/**
 * The listings of the latest completed runs that listed `runId`'s platform (`platform_key`,
 * 0014; another platform's figures are never used), newest first: what the next run's `auto` and
 * its listing windows start from.
 */
export async function previousListings(
  db: Kysely<Database>,
  runId: string,
  limit = 20,
): Promise<PreviousListing[]> {
  const r = await sql<{ id: string; listing: Record<string, unknown> | string }>`
    select p.id, p.summary->'platform_state'->'listing' as listing
    from controls_migration.runs p, controls_migration.runs me
    where me.id = ${runId} and p.platform_key = me.platform_key
      and p.status = 'completed' and jsonb_typeof(p.summary->'platform_state'->'listing') = 'object'
    order by p.id desc limit ${limit}
  `.execute(db);
  return r.rows.map((x) => ({
    runId: x.id,
    listing: typeof x.listing === "string" ? JSON.parse(x.listing) : x.listing,
  }));
}
