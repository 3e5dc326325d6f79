/**
 * `status` on PostgreSQL in one connection and one statement: the tool's applied migrations, the
 * run (the one named, else the latest writer run) with its action counts and control row, and,
 * as every open of the database does (`abandoned-runs.ts`), the runs no process runs any more
 * marked `interrupted`, all in one round trip. Loads no kysely: `pg` directly, and the migration
 * names from `migrations/names.ts`. A database this statement cannot read (no tool
 * schema yet, or an older one) answers `undefined`: the caller then opens it the usual way,
 * which creates or upgrades the schema.
 */

import { MIGRATION_NAMES } from "../../../migrations/names.ts";
import {
  type ActionStatus,
  type Run,
  type RunControlRow,
  TOOL_SCHEMA,
  TOOL_TABLES,
  WRITER_MODES,
} from "../schema.ts";
import { PLAN_STALE_AFTER } from "./interrupted-runs.ts";
import pg from "./pg-module.ts";
import { WRITER_LOCK_KEY } from "./run-lock.ts";

/** What a run's status row shows of it. */
export type StatusRun = Pick<
  Run,
  "id" | "mode" | "status" | "dry_run" | "pid" | "host" | "started_at" | "heartbeat_at" | "options"
>;
/** What a run's control row tells `status`. */
export type StatusControl = Pick<
  RunControlRow,
  "report" | "reported_at" | "paused" | "rate_budget"
>;

const MIGRATION_TABLE = `${TOOL_SCHEMA}.kysely_migration`;
/** undefined_table, undefined_column, invalid_schema_name: the schema is missing or older. */
const SCHEMA_NOT_READY = new Set(["42P01", "42703", "3F000"]);
const CONNECT_TIMEOUT_MS = 10_000;

const STATEMENT = `
with marked as (
  update ${TOOL_TABLES.runs} set status = 'interrupted', finished_at = now()
  where status = 'running' and (
    (mode = 'plan' and coalesce(heartbeat_at, started_at) < now() - $2::interval)
    or (mode = any($3::text[]) and not exists (
      select 1 from pg_locks l
      where l.locktype = 'advisory' and l.granted and l.classid = 0
        and l.objid = $4 and l.objsubid = 1
        and l.database = (select oid from pg_database where datname = current_database()))))
  returning id, status
), run as (
  select r.id, r.mode, coalesce(m.status, r.status) as status, r.dry_run, r.pid, r.host,
         r.started_at, r.heartbeat_at, r.options
  from ${TOOL_TABLES.runs} r left join marked m on m.id = r.id
  where ($1::text is null and r.mode = any($3::text[])) or r.id = $1::text
  order by r.started_at desc, r.id desc
  limit 1
)
select
  (select array_agg(name::text order by name) from ${MIGRATION_TABLE}) as migrations,
  (select count(*)::int from marked) as marked,
  to_json(run) as run,
  (select coalesce(json_object_agg(a.status, a.n), '{}'::json)
     from (select status, count(*)::int as n from ${TOOL_TABLES.actions}
           where run_id = run.id group by status) a) as counts,
  c.report, c.reported_at, c.paused, c.rate_budget
from (select 1) one
left join run on true
left join ${TOOL_TABLES.runControls} c on c.run_id = run.id`;

export interface StatusRead {
  /** The tool's migrations applied to this database. */
  readonly migrations: readonly string[];
  /** Runs this read marked interrupted. */
  readonly marked: number;
  readonly run: StatusRun | undefined;
  readonly counts: Record<ActionStatus, number>;
  readonly control: StatusControl | undefined;
}

interface Row {
  migrations: string[] | null;
  marked: number;
  run: (Omit<StatusRun, "started_at" | "heartbeat_at"> & Record<string, unknown>) | null;
  counts: Partial<Record<ActionStatus, number>>;
  report: Record<string, unknown> | null;
  reported_at: Date | null;
  paused: boolean | null;
  rate_budget: number | null;
}

/** True when a database's applied migrations are exactly this version's. */
const sameMigrations = (applied: readonly string[]) =>
  applied.length === MIGRATION_NAMES.length && MIGRATION_NAMES.every((n) => applied.includes(n));

const date = (v: unknown) => (v == null ? null : new Date(String(v)));

/**
 * Reads a run's status from PostgreSQL at `url` in one statement, or `undefined` when the tool's
 * schema is missing, or its applied migrations are not exactly this version's (the usual open
 * then migrates, or refuses a newer schema). Connection errors are thrown as pg's.
 *
 * @example
 *   const read = await readStatusOnce(url, undefined); // the latest writer run
 */
export async function readStatusOnce(
  url: string,
  runId: string | undefined,
): Promise<StatusRead | undefined> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  client.on("error", () => {});
  await client.connect();
  try {
    const params = [runId ?? null, PLAN_STALE_AFTER, [...WRITER_MODES], WRITER_LOCK_KEY];
    const { rows } = await client.query<Row>(STATEMENT, params);
    const row = rows[0] as Row;
    if (!sameMigrations(row.migrations ?? [])) return undefined;
    const r = row.run;
    return {
      migrations: row.migrations ?? [],
      marked: row.marked,
      run: r
        ? ({
            ...r,
            started_at: date(r.started_at) as Date,
            heartbeat_at: date(r.heartbeat_at),
          } as StatusRun)
        : undefined,
      counts: {
        pending: 0,
        in_flight: 0,
        succeeded: 0,
        failed: 0,
        ambiguous: 0,
        skipped: 0,
        ...row.counts,
      },
      control:
        r && row.paused !== null
          ? {
              report: row.report,
              reported_at: row.reported_at,
              paused: row.paused,
              rate_budget: row.rate_budget,
            }
          : undefined,
    };
  } catch (err) {
    if (SCHEMA_NOT_READY.has((err as { code?: string }).code ?? "")) return undefined;
    throw err;
  } finally {
    await client.end().catch(() => {});
  }
}
