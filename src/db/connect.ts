import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { Kysely, PostgresDialect } from "kysely";
import { PGliteDialect } from "kysely-pglite-dialect";
import pg from "pg";
import Cursor from "pg-cursor";
import type { GlobalConfig } from "../config.ts";
import { UserError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { redactUrl } from "../secret.ts";
import { acquireDataDirLock, type DataDirLock } from "./data-dir-lock.ts";
import type { Database } from "./schema.ts";

export type Backend = "postgres" | "pglite";

/** An open database. `close()` releases everything and is safe to call more than once. */
export interface DatabaseHandle {
  readonly db: Kysely<Database>;
  readonly backend: Backend;
  close(): Promise<void>;
}

const POOL_SIZE = 10;
const INT8_OID = 20;

/**
 * Opens the tool's database: PostgreSQL when `global.databaseUrl` is set, otherwise the embedded
 * PGlite in `global.dataDir` (created if missing). Connection problems become a `UserError` that
 * names the flag to fix; the password never appears in it.
 *
 * @example
 *   const handle = await openDatabase(global, logger);
 *   try { await ensureSchema(handle.db, logger); } finally { await handle.close(); }
 */
export async function openDatabase(global: GlobalConfig, logger: Logger): Promise<DatabaseHandle> {
  if (global.databaseUrl !== undefined) return openPostgres(global.databaseUrl, logger);
  return openPglite(global.dataDir, logger);
}

/**
 * A `pg` pool whose int8 (bigint, bigserial, count(*)) values are numbers, like PGlite's. The parser
 * is set on this pool only, never on the process-wide `pg.types`.
 */
export function createPgPool(connectionString: string, max = POOL_SIZE): pg.Pool {
  return new pg.Pool({
    connectionString,
    max,
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        oid === INT8_OID && format !== "binary"
          ? (v: string) => Number(v)
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
}

async function openPostgres(url: string, logger: Logger): Promise<DatabaseHandle> {
  const pool = createPgPool(url);
  // An idle client losing its server emits on the pool; unhandled, that would crash the process.
  pool.on("error", (err) => logger.warn(`PostgreSQL connection lost: ${err.message}`));
  try {
    const client = await pool.connect();
    client.release();
  } catch (err) {
    await pool.end().catch(() => {});
    throw new UserError(
      `Cannot connect to PostgreSQL at ${redactUrl(url)} (set with --database-url or env DATABASE_URL): ${describePgError(err)}`,
    );
  }
  logger.debug(`Connected to PostgreSQL at ${redactUrl(url)}`);
  return wrapPgPool(pool);
}

async function openPglite(dataDir: string, logger: Logger): Promise<DatabaseHandle> {
  const dir = resolve(dataDir);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new UserError(
      `Cannot create the embedded database folder ${dir} (set with --data-dir or env CONTROLS_DATA_DIR): ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`,
    );
  }
  const lock = acquireDataDirLock(dir);
  let pglite: PGlite;
  try {
    pglite = new PGlite(dir);
    await pglite.waitReady;
  } catch (err) {
    lock.release();
    throw new UserError(
      `Cannot open the embedded database in ${dir} (set with --data-dir or env CONTROLS_DATA_DIR): ${(err as Error).message}`,
    );
  }
  logger.debug(`Opened embedded PGlite database in ${dir}`);
  return wrapPglite(pglite, lock);
}

/**
 * Wraps an existing PGlite instance (e.g. `new PGlite()` in memory for tests). The handle owns
 * it: `close()` closes the instance.
 *
 * Beware: PGlite has one connection, which the dialect hands out one holder at a time. Inside
 * `db.transaction()` use only the transaction object; a query on `db` would wait forever.
 *
 * @example
 *   const handle = wrapPglite(new PGlite());
 */
export function wrapPglite(pglite: PGlite, lock?: DataDirLock): DatabaseHandle {
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  return handle(db, "pglite", async () => {
    try {
      await db.destroy();
      // Kysely skips the driver's destroy() (which closes PGlite) when no query ever ran.
      if (!pglite.closed) await pglite.close();
    } finally {
      lock?.release();
    }
  });
}

/**
 * Wraps an existing pg pool (streaming via pg-cursor enabled). The handle owns it: `close()` ends
 * the pool. Build the pool with {@link createPgPool} so int8 values are numbers.
 *
 * @example
 *   const handle = wrapPgPool(createPgPool("postgres://127.0.0.1/app"));
 */
export function wrapPgPool(pool: pg.Pool): DatabaseHandle {
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool, cursor: Cursor }) });
  return handle(db, "postgres", async () => {
    await db.destroy();
    // Kysely skips the driver's destroy() (which ends the pool) when no query ever ran.
    if (!pool.ended) await pool.end();
  });
}

function handle(db: Kysely<Database>, backend: Backend, release: () => Promise<void>) {
  let closing: Promise<void> | undefined;
  return Object.freeze({
    db,
    backend,
    close: () => {
      closing ??= release();
      return closing;
    },
  });
}

/** A one-line reason for a failed connection: code plus message, never the connection string. */
function describePgError(err: unknown): string {
  const e = err as { code?: string; message?: string; errors?: { message?: string }[] };
  // AggregateError (IPv4 + IPv6 both refused) has an empty message; use its first member.
  const message = e.message || e.errors?.[0]?.message || String(err);
  if (e.code === "ECONNREFUSED") return `connection refused (${message}). Is the server running?`;
  if (e.code === "28P01" || e.code === "28000") return `authentication failed (${message}).`;
  if (e.code === "3D000") return `${message}. Create it first or fix the database name.`;
  if (e.code === "ENOTFOUND") return `unknown host (${message}).`;
  return e.code ? `${message} (${e.code}).` : `${message}.`;
}
