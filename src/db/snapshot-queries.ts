import { type Kysely, sql } from "kysely";
import {
  type Database,
  type NewSnapshotControl,
  type NewSnapshotIdentity,
  type NewSourceRow,
  TOOL_TABLES,
} from "./schema.ts";

/**
 * Inserts one page of snapshot rows in one transaction; re-observing an identity in the same run
 * replaces it, so the page can be written again after a lost connection.
 *
 * @example
 *   await insertSnapshot(db, [{ run_id, identity_id, status: "found", error: null }], controls);
 */
export async function insertSnapshot(
  db: Kysely<Database>,
  identities: NewSnapshotIdentity[],
  controls: NewSnapshotControl[],
): Promise<void> {
  if (identities.length === 0 && controls.length === 0) return;
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < identities.length; i += 2000) {
      await trx
        .insertInto(TOOL_TABLES.snapshotIdentities)
        .values(identities.slice(i, i + 2000))
        .onConflict((oc) =>
          oc.columns(["run_id", "identity_id"]).doUpdateSet((eb) => ({
            status: eb.ref("excluded.status"),
            error: eb.ref("excluded.error"),
            observed_at: eb.ref("excluded.observed_at"),
          })),
        )
        .execute();
    }
    for (let i = 0; i < controls.length; i += 1000) {
      await trx
        .insertInto(TOOL_TABLES.snapshotControls)
        .values(controls.slice(i, i + 1000))
        .onConflict((oc) => oc.columns(["run_id", "control_id"]).doNothing())
        .execute();
    }
  });
}

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
  for (let i = 0; i < rows.length; i += 1000) {
    await db
      .insertInto(TOOL_TABLES.sourceRows)
      .values(rows.slice(i, i + 1000))
      // Idempotent, so a batch whose answer a lost connection swallowed can be sent again.
      .onConflict((oc) => oc.columns(["run_id", "seq"]).doNothing())
      .execute();
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
 * Of some listed identities, those holding a SELL_ONLY that this run's source rows do not cover
 * and that are not classified yet: their source rows are looked up by id before they are.
 *
 * @example
 *   const ids = await sellOnlyHoldersOutsideSource(db, runId, page.map((i) => i.id));
 */
export async function sellOnlyHoldersOutsideSource(
  db: Kysely<Database>,
  runId: string,
  identityIds: readonly string[],
): Promise<string[]> {
  if (identityIds.length === 0) return [];
  const r = await sql<{ identity_id: string }>`
    select distinct c.identity_id from ${sql.table(TOOL_TABLES.snapshotControls)} c
    where c.run_id = ${runId} and c.type = 'SELL_ONLY'
      and c.identity_id = any(${[...identityIds]}::text[])
      and not exists (select 1 from ${sql.table(TOOL_TABLES.sourceRows)} s
                      where s.run_id = c.run_id and s.identity_id = c.identity_id)
      and not exists (select 1 from ${sql.table(TOOL_TABLES.findings)} f
                      where f.run_id = c.run_id and f.identity_id = c.identity_id)
    order by c.identity_id
  `.execute(db);
  return r.rows.map((x) => x.identity_id);
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

/** Distinct identities of a run's snapshot holding an active SELL_ONLY. */
export async function countSellOnlyIdentities(
  db: Kysely<Database>,
  runId: string,
): Promise<number> {
  const r = await db
    .selectFrom("controls_migration.snapshot_controls")
    .select(db.fn.count<number>("identity_id").distinct().as("n"))
    .where("run_id", "=", runId)
    .where("type", "=", "SELL_ONLY")
    .where("deleted_at", "is", null)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** One earlier run's listing figures, as its summary.json recorded them. */
export interface PreviousListing {
  readonly runId: string;
  readonly listing: Record<string, unknown>;
}

/**
 * The listings of the latest completed runs that listed the platform, newest first: what the
 * next run's `auto` and its listing windows start from.
 */
export async function previousListings(
  db: Kysely<Database>,
  limit = 20,
): Promise<PreviousListing[]> {
  const r = await sql<{ id: string; listing: Record<string, unknown> | string }>`
    select id, summary->'platform_state'->'listing' as listing
    from controls_migration.runs
    where status = 'completed' and jsonb_typeof(summary->'platform_state'->'listing') = 'object'
    order by id desc limit ${limit}
  `.execute(db);
  return r.rows.map((x) => ({
    runId: x.id,
    listing: typeof x.listing === "string" ? JSON.parse(x.listing) : x.listing,
  }));
}
