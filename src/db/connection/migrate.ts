import { type Kysely, Migrator, sql } from "kysely";
import { migrations } from "../../../migrations/index.ts";
import { UserError } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import { TOOL_SCHEMA } from "../schema.ts";

const MIGRATION_TABLE = "kysely_migration";

export interface MigrateResult {
  /** Names applied by this call, in order; empty when the schema was already up to date. */
  readonly applied: string[];
  /** How many migrations the code knows (all of them are applied after a successful call). */
  readonly known: number;
}

/**
 * Brings the tool's schema up to date. Runs every pending migration in one transaction, under the
 * Migrator's lock, so two processes migrating at once do not clash. Refuses a database that has
 * migrations this code does not know (a newer controls-migrate wrote it).
 *
 * @example
 *   const { applied } = await migrateToLatest(db, logger);
 *   // ["0001_initial"] the first time, [] afterwards
 */
export async function migrateToLatest(
  // biome-ignore lint/suspicious/noExplicitAny: works on any Kysely, whatever its table types
  db: Kysely<any>,
  logger: Logger,
): Promise<MigrateResult> {
  await createToolSchema(db);
  await refuseNewerSchema(db);

  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => ({ ...migrations }) },
    migrationTableSchema: TOOL_SCHEMA,
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (error !== undefined || failed) {
    const reason = error instanceof Error ? error.message : String(error ?? "unknown error");
    const which = failed ? ` ${failed.migrationName}` : "";
    throw new Error(
      `Database migration${which} failed and was rolled back; nothing was applied: ${reason}`,
    );
  }
  const applied = (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
  for (const name of applied) logger.info(`Applied database migration ${name}`);
  return { applied, known: Object.keys(migrations).length };
}

/**
 * The idempotent "make sure the schema is there" every command calls before touching the tool's
 * tables. Cheap when up to date (one catalog lookup and one small select).
 *
 * @example
 *   await ensureSchema(handle.db, logger);
 */
// biome-ignore lint/suspicious/noExplicitAny: works on any Kysely, whatever its table types
export async function ensureSchema(db: Kysely<any>, logger: Logger): Promise<MigrateResult> {
  const appliedNames = await readAppliedNames(db);
  const known = Object.keys(migrations);
  if (appliedNames !== undefined && known.every((n) => appliedNames.includes(n))) {
    assertNotNewer(appliedNames);
    return { applied: [], known: known.length };
  }
  return migrateToLatest(db, logger);
}

// biome-ignore lint/suspicious/noExplicitAny: see migrateToLatest
async function refuseNewerSchema(db: Kysely<any>): Promise<void> {
  const names = await readAppliedNames(db);
  if (names !== undefined) assertNotNewer(names);
}

function assertNotNewer(appliedNames: readonly string[]): void {
  const unknown = appliedNames.filter((n) => !(n in migrations));
  if (unknown.length > 0) {
    throw new UserError(
      `The database schema is newer than this controls-migrate: it has migration(s) ${unknown.join(", ")} that this version does not know. Upgrade the tool (or point --database-url / --data-dir at another database).`,
    );
  }
}

/** Names recorded in the tracking table, or undefined when it does not exist yet. */
// biome-ignore lint/suspicious/noExplicitAny: see migrateToLatest
async function readAppliedNames(db: Kysely<any>): Promise<string[] | undefined> {
  const qualified = `${TOOL_SCHEMA}.${MIGRATION_TABLE}`;
  const exists = await sql<{ oid: string | null }>`select to_regclass(${qualified})::text as oid`
    .execute(db)
    .then((r) => r.rows[0]?.oid);
  if (!exists) return undefined;
  const rows = await sql<{ name: string }>`select name from ${sql.table(qualified)} order by name`
    .execute(db)
    .then((r) => r.rows);
  return rows.map((r) => r.name);
}

/**
 * `create schema if not exists` is not safe against a concurrent twin in PostgreSQL: both pass the
 * existence check and the loser fails on the catalog's unique index (23505) or with 42P06. The
 * schema then exists, which is all we wanted.
 */
// biome-ignore lint/suspicious/noExplicitAny: works on any Kysely, whatever its table types
async function createToolSchema(db: Kysely<any>): Promise<void> {
  try {
    await sql`create schema if not exists ${sql.id(TOOL_SCHEMA)}`.execute(db);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code !== "23505" && code !== "42P06") throw err;
  }
}
