import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { Kysely } from "kysely";
import type { GlobalConfig } from "../../config.ts";
import { DiskFullError, databaseDiskFullError } from "../../disk-full.ts";
import { UserError } from "../../errors.ts";
import { type Logger, silentLogger } from "../../log.ts";
import { connectionSecrets, postgresTarget, redactUrl } from "../../secret.ts";
import { setV8Flag } from "../../v8-flags.ts";
import type { Database } from "../schema.ts";
import { markAbandonedRunsInterrupted } from "./abandoned-runs.ts";
import type { DataDirLock } from "./data-dir-lock.ts";
import type { Backend, DatabaseHandle, PostgresSession } from "./database-handle.ts";
import { markEmbedded } from "./embedded.ts";
import { BUSY_WAIT_MS, lockWhenFree } from "./folder-wait.ts";
import pg from "./pg-module.ts";
import { seedFromTemplate } from "./pglite-template.ts";
import { PgliteThread, type PgliteThreadOptions } from "./pglite-thread.ts";
import { PgliteThreadDialect } from "./pglite-thread-dialect.ts";
import { Reconnector } from "./reconnect.ts";
import { createReconnectingKysely } from "./reconnecting-kysely.ts";

export type { Backend, DatabaseHandle, PostgresSession };

const POOL_SIZE = 10;
const INT8_OID = 20;
/** A connect attempt to a server that does not answer fails after this, and is retried. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Opens the tool's database: PostgreSQL when `global.databaseUrl` is set, otherwise the embedded
 * PGlite in `global.dataDir` (created if missing). Connection problems become a `UserError` that
 * names the flag to fix; the password never appears in it.
 *
 * @example
 *   const handle = await openDatabase(global, logger);
 *   try { await ensureSchema(handle.db, logger); } finally { await handle.close(); }
 */
export async function openDatabase(
  global: GlobalConfig,
  logger: Logger,
  options: { readonly busyWaitMs?: number } = {},
): Promise<DatabaseHandle> {
  boundHeapGrowth(global.databaseUrl === undefined);
  const handle =
    global.databaseUrl !== undefined
      ? await openPostgres(global.databaseUrl, global.dbRetryS, logger)
      : await openPglite(global.dataDir, logger, options.busyWaitMs ?? BUSY_WAIT_MS);
  try {
    // The database is reachable again: runs that a lost connection (or a kill) left "running"
    // are marked interrupted now, whichever command opened it.
    await markAbandonedRunsInterrupted(handle, logger);
  } catch (err) {
    await handle.close();
    throw err;
  }
  return handle;
}

/**
 * How far V8 lets this process's heaps grow past what is live. V8 picks a factor of up to 4 from
 * its own collection speed, so a long run's peak memory follows its length more than its work: a
 * 30 s plan of 1,000,000 identities held a main heap of 115–130 MB for 40–100 MB live. A fixed
 * factor trades collector CPU for memory (plan of 1,000,000 identities, `--rate 40`, measured side
 * by side):
 *
 * - PostgreSQL: peak RSS 231 MB by default, 174–182 MB at 2×, 161–168 MB at 1.5×; the tool's CPU
 *   11.7–13.1 s, 12.4–14.3 s and 15.7–16.7 s. 2× it is: the wall time stays at the rate floor.
 * - PGlite, whose PostgreSQL shares this process: 1.5×, peaks of 273–285 MB at 1,000,000
 *   identities and 252–268 MB at 100,000 (V8's default: 392–417 and 280–392 MB), in the same
 *   wall time, since the listing is what a plan waits for.
 *
 * V8 reads the flag at each collection, so setting it here, after start-up, takes effect.
 */
function boundHeapGrowth(embedded: boolean): void {
  setV8Flag("heap-growing-percent", embedded ? 50 : 100);
}

/**
 * A `pg` pool whose int8 (bigint, bigserial, count(*)) values are numbers, like PGlite's. The parser
 * is set on this pool only, never on the process-wide `pg.types`.
 *
 * Every client gets an 'error' listener when it connects. The pool listens only on idle clients;
 * a checked-out client (a query in flight, the writer lock's session) whose server goes away emits
 * 'error', and unheard that crashes the process. The failure itself reaches whoever uses the
 * client, through the failing query or the lock's own listener.
 */
export function createPgPool(connectionString: string, max = POOL_SIZE): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        oid === INT8_OID && format !== "binary"
          ? (v: string) => Number(v)
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  pool.on("connect", (client) => {
    client.on("error", ignoreClientError);
    // Queued before the session's first query. The run's queries are many and short; JIT
    // compiling them cost about 40 ms each (a third of a findings batch at 1,000,000 identities).
    client.query("set jit = off; set max_parallel_workers_per_gather = 0").catch(ignoreClientError);
  });
  // An idle client losing its server emits on the pool; the pool drops it and the next checkout
  // gets a fresh connection.
  pool.on("error", ignoreClientError);
  return pool;
}

function ignoreClientError(): void {}

async function openPostgres(url: string, retryS: number, logger: Logger): Promise<DatabaseHandle> {
  // Whatever the driver or the server might echo, the credentials never reach a log line.
  for (const secret of connectionSecrets(url)) logger.addSecret(secret);
  const pool = createPgPool(url);
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
  return wrapPgPool(pool, { retryS, logger, target: describeTarget(url) });
}

/** `PostgreSQL host:port/database`: where the database is, with no credential. */
function describeTarget(url: string): string {
  const t = postgresTarget(url);
  return `PostgreSQL ${t.host}:${t.port}/${t.database}`;
}

async function openPglite(
  dataDir: string,
  logger: Logger,
  busyWaitMs: number,
): Promise<DatabaseHandle> {
  const dir = resolve(dataDir);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new UserError(
      `Cannot create the embedded database folder ${dir} (set with --data-dir or env CONTROLS_DATA_DIR): ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`,
    );
  }
  const lock = await lockWhenFree(dir, busyWaitMs, logger);
  let thread: PgliteThread;
  try {
    logger.debug(`PGlite data folder ${dir}: ${seedFromTemplate(dir)}`);
    thread = await PgliteThread.start({ ...EMBEDDED, dataDir: dir });
  } catch (thrown) {
    lock.release();
    // No room for the folder's files (or for PostgreSQL's start-up): named with --data-dir.
    const err = databaseDiskFullError(thrown, dir);
    if (err instanceof DiskFullError) throw err;
    throw new UserError(
      `Cannot open the embedded database in ${dir} (set with --data-dir or env CONTROLS_DATA_DIR): ${(thrown as Error).message}`,
    );
  }
  logger.debug(`Opened embedded PGlite database in ${dir}`);
  return wrapPgliteThread(thread, lock);
}

/**
 * How the embedded PostgreSQL is sized. PGlite keeps PostgreSQL's default of 128 MB of shared
 * buffers; the data folder's files sit in the operating system's page cache anyway, so 16 MB is
 * enough, and every buffer is resident memory of this process (measured: a plan of 10,000
 * identities peaked at 525 MB with the default, 445 MB with 32 MB; a plan of 1,000,000 at
 * 427 MB with 32 MB and 384 MB with 16 MB, in the same time).
 */
export const EMBEDDED: PgliteThreadOptions = Object.freeze({
  settings: Object.freeze({ shared_buffers: "16MB" }),
});

/**
 * An embedded PGlite database run in a worker thread, in memory unless `options.dataDir` is set
 * (no data-folder lock is taken here: {@link openDatabase} does that for a folder). For tests, a
 * dumped data folder (`loadDataDir`) skips initdb.
 *
 * @example
 *   const handle = await openPgliteThread({ loadDataDir: template });
 */
export async function openPgliteThread(options: PgliteThreadOptions = {}): Promise<DatabaseHandle> {
  return wrapPgliteThread(await PgliteThread.start({ ...EMBEDDED, ...options }));
}

/**
 * The handle of a started {@link PgliteThread}; `close()` ends the thread, then releases `lock`.
 *
 * Beware: PGlite has one connection, which the driver hands out one holder at a time. Inside
 * `db.transaction()` use only the transaction object; a query on `db` would wait forever.
 */
function wrapPgliteThread(thread: PgliteThread, lock?: DataDirLock): DatabaseHandle {
  const db = new Kysely<Database>({ dialect: new PgliteThreadDialect(thread) });
  markEmbedded(db);
  return handle(
    db,
    "pglite",
    async () => {
      try {
        await db.destroy();
        // Kysely skips the driver's destroy() (which closes the thread) when no query ever ran.
        await thread.close();
      } finally {
        lock?.release();
      }
    },
    undefined,
    thread,
  );
}

export interface WrapPgPoolOptions {
  /** Seconds to retry a lost connection (--db-retry-s); 60 by default. */
  readonly retryS?: number;
  readonly logger?: Logger;
  /** Where the database is, for messages (never a password). */
  readonly target?: string;
}

/**
 * Wraps an existing pg pool (streaming via pg-cursor enabled). The handle owns it: `close()` ends
 * the pool. Build the pool with {@link createPgPool} so int8 values are numbers and a lost
 * connection never crashes the process. Work whose connection is lost is retried on a fresh one
 * for `retryS` seconds (see `reconnecting-kysely.ts`).
 *
 * @example
 *   const handle = wrapPgPool(createPgPool("postgres://127.0.0.1/app"), { retryS: 60, logger });
 */
export function wrapPgPool(pool: pg.Pool, options: WrapPgPoolOptions = {}): DatabaseHandle {
  const reconnect = new Reconnector({
    retryS: options.retryS ?? 60,
    logger: options.logger ?? silentLogger,
    target: options.target ?? "PostgreSQL",
  });
  const db = createReconnectingKysely(pool, reconnect);
  return handle(
    db,
    "postgres",
    async () => {
      await db.destroy();
      // Kysely skips the driver's destroy() (which ends the pool) when no query ever ran.
      if (!pool.ended) await pool.end();
    },
    Object.freeze({ pool, reconnect }),
  );
}

function handle(
  db: Kysely<Database>,
  backend: Backend,
  release: () => Promise<void>,
  postgres?: PostgresSession,
  pglite?: PgliteThread,
): DatabaseHandle {
  let closing: Promise<void> | undefined;
  return Object.freeze({
    db,
    backend,
    postgres,
    pglite,
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
