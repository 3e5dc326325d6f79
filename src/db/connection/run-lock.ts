/**
 * The database-wide writer lock: one apply/reconcile at a time on a database. A session-level
 * `pg_try_advisory_lock` on a session held for the whole run, so a crashed process releases it with
 * its connection. If that session is lost (killed backend, server restart), no statement of the run
 * goes through until the lock is taken again on a fresh session; if another writer took it
 * meanwhile, the run stops. On PGlite the data-folder lock taken by `openDatabase` already makes
 * the process the only user, so this is a no-op there.
 */
import type pg from "pg";
import { sleep } from "../../backoff.ts";
import { UserError } from "../../errors.ts";
import type { DatabaseHandle, PostgresSession } from "./database-handle.ts";

/** Arbitrary but fixed: "cmig" as an int32. All apply/reconcile runs on one database share it. */
export const WRITER_LOCK_KEY = 0x636d6967;

export interface RunLock {
  release(): Promise<void>;
}

/**
 * Another writer holds the lock this run lost with its connection. A `UserError`: the CLI prints
 * the message alone and exits 1. Nothing more was sent to the platform.
 */
export class WriterLockTakenError extends UserError {
  readonly holderPid: number | null;

  constructor(holderPid: number | null, hint = "") {
    super(
      `Another apply/reconcile took the writer lock while this run's database connection was lost${holderPid ? ` (PostgreSQL backend pid ${holderPid})` : ""}. This run stopped without sending anything more.${hint ? ` ${hint}` : ""}`,
    );
    this.holderPid = holderPid;
  }

  /** The same refusal with what to do next (e.g. the exact resume command). */
  withHint(hint: string): WriterLockTakenError {
    return new WriterLockTakenError(this.holderPid, hint);
  }
}

/**
 * Takes the writer lock. Returns null when another process holds it.
 *
 * @example
 *   const lock = await acquireRunLock(handle);
 *   if (!lock) throw new UserError("another run holds the lock");
 *   try { ... } finally { await lock.release(); }
 */
export async function acquireRunLock(handle: DatabaseHandle): Promise<RunLock | null> {
  if (!handle.postgres) return { release: async () => {} };
  const session = handle.postgres;
  const client = await session.reconnect.run(() => session.pool.connect(), { gated: false });
  let held: TryLock;
  try {
    held = await tryLock(client);
  } catch (err) {
    client.release(true);
    throw err;
  }
  if (!held.ok) {
    client.release();
    return null;
  }
  return new WriterLock(session, client, held.pid);
}

type TryLock = { ok: true; pid: number } | { ok: false; pid: number; holder: number | null };

async function tryLock(client: pg.PoolClient): Promise<TryLock> {
  const r = await client.query<{ ok: boolean; pid: number; holder: number | null }>(
    `select pg_try_advisory_lock($1) as ok, pg_backend_pid() as pid,
            (select l.pid from pg_locks l
             where l.locktype = 'advisory' and l.granted and l.classid = 0 and l.objid = $1
               and l.objsubid = 1
               and l.database = (select oid from pg_database where datname = current_database())
               and l.pid <> pg_backend_pid()
             limit 1) as holder`,
    [WRITER_LOCK_KEY],
  );
  const row = r.rows[0]!;
  return row.ok ? { ok: true, pid: row.pid } : { ok: false, pid: row.pid, holder: row.holder };
}

class WriterLock implements RunLock {
  readonly #session: PostgresSession;
  #client: pg.PoolClient | undefined;
  #pid: number;
  /** Pending while the lock is being taken again; rejected for good when that failed. */
  #retaking: Promise<void> | undefined;
  #released = false;
  /** Takes the lost-session listeners off the client held, which goes back to the pool. */
  #unwatch: (() => void) | undefined;

  constructor(session: PostgresSession, client: pg.PoolClient, pid: number) {
    this.#session = session;
    this.#client = client;
    this.#pid = pid;
    this.#watch(client);
    // Every statement of the run waits while the lock is being taken again, and fails once it
    // could not be: a create is never journaled in_flight (and so never sent) without the lock.
    session.reconnect.setGate(() => this.#retaking ?? Promise.resolve());
  }

  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    this.#session.reconnect.setGate(undefined);
    const client = this.#client;
    this.#client = undefined;
    if (!client) return;
    this.#unwatch?.();
    try {
      await client.query("select pg_advisory_unlock($1)", [WRITER_LOCK_KEY]);
      client.release();
    } catch {
      // The session is gone, and the lock with it.
      client.release(true);
    }
  }

  /**
   * Listens for the loss of the lock's session until the client goes back to the pool: a pooled
   * client kept each lock's listeners before, 11 of each after 11 runs in one process.
   */
  #watch(client: pg.PoolClient): void {
    const onLost = () => this.#lost(client);
    client.once("error", onLost);
    client.once("end", onLost);
    this.#unwatch = () => {
      client.off("error", onLost);
      client.off("end", onLost);
    };
  }

  #lost(client: pg.PoolClient): void {
    if (this.#released || this.#client !== client) return;
    this.#client = undefined;
    this.#unwatch?.();
    client.release(true);
    const { logger } = this.#session.reconnect.options;
    logger.warn(
      "Lost the database session holding the writer lock; nothing more is written until the lock is taken again.",
    );
    const retaking = this.#retake();
    // Observed through the gate by every statement; unobserved here.
    retaking.catch(() => {});
    this.#retaking = retaking;
  }

  async #retake(): Promise<void> {
    const { pool, reconnect } = this.#session;
    const deadline = Date.now() + reconnect.options.retryS * 1000;
    for (;;) {
      const attempt = await reconnect.run(
        async () => {
          const client = await pool.connect();
          try {
            return { client, result: await tryLock(client) };
          } catch (err) {
            client.release(true);
            throw err;
          }
        },
        { gated: false },
      );
      const { client, result } = attempt;
      if (this.#released) {
        if (result.ok) await client.query("select pg_advisory_unlock($1)", [WRITER_LOCK_KEY]);
        client.release();
        return;
      }
      if (result.ok) {
        this.#client = client;
        this.#pid = result.pid;
        this.#watch(client);
        this.#retaking = undefined;
        reconnect.options.logger.info("Took the writer lock again; continuing.");
        return;
      }
      client.release();
      if (result.holder !== this.#pid) throw new WriterLockTakenError(result.holder);
      // Our own lost session may linger on the server until it notices the client is gone.
      if (Date.now() > deadline) {
        throw new UserError(
          `Could not take the writer lock again within ${reconnect.options.retryS} s (--db-retry-s): the server still holds it for this run's lost session (backend pid ${this.#pid}). This run stopped without sending anything more.`,
        );
      }
      await sleep(200);
    }
  }
}
