/**
 * Holds an ACCESS EXCLUSIVE lock on one of the tool's tables in a transaction of its own, until
 * `release()`: a run's statement on that table waits there, so a test can hold a run in a stage
 * (the report stage, on `request_series`) on PostgreSQL, where other processes may share the
 * database.
 *
 * @example
 *   const lock = await lockToolTable(await rig.target.open(), "request_series");
 *   try { ... } finally { await lock.release(); }
 */
import { type Kysely, sql } from "kysely";

export async function lockToolTable(
  // biome-ignore lint/suspicious/noExplicitAny: any database of the tool's
  handle: { readonly db: Kysely<any>; close(): Promise<void> },
  table: string,
): Promise<{ release(): Promise<void> }> {
  let unlock = () => {};
  const unlocked = new Promise<void>((resolve) => {
    unlock = resolve;
  });
  let locked = () => {};
  const isLocked = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const held = handle.db.transaction().execute(async (trx) => {
    await sql`lock table ${sql.table(`controls_migration.${table}`)} in access exclusive mode`.execute(
      trx,
    );
    locked();
    await unlocked;
  });
  await Promise.race([isLocked, held]);
  return {
    async release() {
      unlock();
      await held;
      await handle.close();
    },
  };
}
