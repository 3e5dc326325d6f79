import { sql } from "kysely";
import type { Logger } from "../../log.ts";
import type { DatabaseHandle } from "./database-handle.ts";
import { PLAN_STALE_AFTER, reportMarkedInterrupted } from "./interrupted-runs.ts";
import { WRITER_LOCK_KEY } from "./run-lock.ts";

/**
 * A run's true counts, from its findings and journal (as a close writes them: finding kinds, and
 * actions by `status:outcome`), for a run no process closed (a forced exit, a kill).
 */
const journalCounts = sql`(
  select coalesce(jsonb_object_agg(k, n), '{}'::jsonb) from (
    select f.finding as k, count(*) as n from controls_migration.findings f
    where f.run_id = r.id group by f.finding
    union all
    select case when a.outcome is null then a.status else a.status || ':' || a.outcome end, count(*)
    from controls_migration.actions a where a.run_id = r.id group by 1) c)`;

export { PLAN_STALE_AFTER, reportMarkedInterrupted };

/**
 * Marks `interrupted` the runs that no process is running any more: left `running` by a process
 * that lost its database connection for longer than --db-retry-s, or that was killed. Called
 * whenever the database is opened, so such a run is marked as soon as the database is reachable
 * again. Returns how many runs were marked.
 *
 * - PGlite: the data-folder lock makes this process the only user, so every `running` run is dead.
 * - PostgreSQL: writer runs (apply, reconcile, revert) are dead when nobody holds the writer lock. The check is part
 *   of the one UPDATE statement, so a writer starting meanwhile is never marked: its run row is
 *   committed only after it took the lock. Plan runs take no lock; a stale heartbeat tells.
 *
 * @example
 *   const marked = await markAbandonedRunsInterrupted(handle, logger);
 */
export async function markAbandonedRunsInterrupted(
  handle: DatabaseHandle,
  logger: Logger,
): Promise<number> {
  const { db } = handle;
  const exists = await sql<{
    oid: string | null;
  }>`select to_regclass('controls_migration.runs')::text as oid`
    .execute(db)
    .then((r) => r.rows[0]?.oid);
  if (!exists) return 0;
  const condition =
    handle.backend === "pglite"
      ? sql`true`
      : sql`(mode = 'plan' and coalesce(heartbeat_at, started_at) < now() - ${PLAN_STALE_AFTER}::interval)
          or (mode in ('apply', 'reconcile', 'revert') and not exists (
                select 1 from pg_locks l
                where l.locktype = 'advisory' and l.granted and l.classid = 0
                  and l.objid = ${WRITER_LOCK_KEY} and l.objsubid = 1
                  and l.database = (select oid from pg_database where datname = current_database())))`;
  const r = await sql`
    update controls_migration.runs r set status = 'interrupted', finished_at = now(),
      counts = ${journalCounts}
    where status = 'running' and (${condition})`.execute(db);
  const marked = Number(r.numAffectedRows ?? 0);
  reportMarkedInterrupted(logger, marked);
  return marked;
}
