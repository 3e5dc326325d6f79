import { sql } from "kysely";
import type { DatabaseHandle } from "./connect.ts";

/** Arbitrary but fixed: "cmig" as an int32. All apply/reconcile runs on one database share it. */
const LOCK_KEY = 0x636d6967;

export interface RunLock {
  release(): Promise<void>;
}

/**
 * Takes the database-wide writer lock: a session-level `pg_try_advisory_lock` on a connection held
 * for the whole run, so a crashed process releases it with its connection. Returns null when
 * another process holds it. On PGlite the data-folder lock taken by `openDatabase` already makes
 * the process the only user, so this is a no-op there.
 *
 * @example
 *   const lock = await acquireRunLock(handle);
 *   if (!lock) throw new UserError("another run holds the lock");
 *   try { ... } finally { await lock.release(); }
 */
export async function acquireRunLock(handle: DatabaseHandle): Promise<RunLock | null> {
  if (handle.backend === "pglite") return { release: async () => {} };
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  let settle!: (ok: boolean) => void;
  const acquired = new Promise<boolean>((r) => {
    settle = r;
  });
  const holder = handle.db
    .connection()
    .execute(async (conn) => {
      const r = await sql<{ ok: boolean }>`select pg_try_advisory_lock(${LOCK_KEY}) as ok`.execute(
        conn,
      );
      const ok = r.rows[0]?.ok === true;
      settle(ok);
      if (!ok) return;
      await released;
      await sql`select pg_advisory_unlock(${LOCK_KEY})`.execute(conn);
    })
    .catch((err) => {
      settle(false);
      throw err;
    });
  if (!(await acquired)) {
    await holder;
    return null;
  }
  return {
    release: async () => {
      release();
      await holder;
    },
  };
}
