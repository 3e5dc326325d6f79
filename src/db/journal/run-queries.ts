import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { type Kysely, sql } from "kysely";
import {
  type Database,
  type Run,
  type RunMode,
  type RunStatus,
  TOOL_TABLES,
  WRITER_MODES,
} from "../schema.ts";

const T = TOOL_TABLES.runs;

/**
 * `YYYYMMDD-HHMMSS-xxxx`, sortable by start time and unique enough for one database.
 *
 * @example
 *   newRunId(new Date("2026-11-22T10:15:00Z")) // "20261122-101500-3f9a"
 */
export function newRunId(now = new Date()): string {
  const p = (n: number) => String(n).padStart(2, "0");
  const stamp = `${now.getUTCFullYear()}${p(now.getUTCMonth() + 1)}${p(now.getUTCDate())}-${p(now.getUTCHours())}${p(now.getUTCMinutes())}${p(now.getUTCSeconds())}`;
  return `${stamp}-${randomBytes(2).toString("hex")}`;
}

/**
 * Records a new run as `running`, with its secret-free options and this process as its runner.
 * Idempotent on the run id.
 *
 * @example
 *   await insertRun(db, { id: newRunId(), mode: "plan", parentRunId: null, options, toolVersion });
 */
export async function insertRun(
  db: Kysely<Database>,
  run: {
    id: string;
    mode: RunMode;
    parentRunId: string | null;
    options: Record<string, unknown>;
    toolVersion: string;
    /** A revert that only writes its report. */
    dryRun?: boolean;
  },
): Promise<void> {
  await db
    .insertInto(T)
    .values({
      id: run.id,
      mode: run.mode,
      status: "running",
      parent_run_id: run.parentRunId,
      options: JSON.stringify(run.options),
      tool_version: run.toolVersion,
      dry_run: run.dryRun ?? false,
      host: hostname(),
      pid: process.pid,
      heartbeat_at: new Date(),
    })
    // Idempotent, so an insert whose answer a lost connection swallowed can be sent again.
    .onConflict((oc) => oc.column("id").doNothing())
    .execute();
}

/**
 * One run by id, or undefined.
 *
 * @example
 *   const run = await getRun(db, "20261122-101500-ab12");
 */
export async function getRun(db: Kysely<Database>, id: string): Promise<Run | undefined> {
  return db.selectFrom(T).selectAll().where("id", "=", id).executeTakeFirst();
}

/**
 * The run's heartbeat: marks it alive now (shown to a writer that finds the lock held).
 *
 * @example
 *   setInterval(() => void touchRun(db, runId), 10_000);
 */
export async function touchRun(db: Kysely<Database>, id: string): Promise<void> {
  await db.updateTable(T).set({ heartbeat_at: new Date() }).where("id", "=", id).execute();
}

/**
 * A resumed run is `running` again, owned by this process.
 *
 * @example
 *   await claimRun(db, resumeRunId);
 */
export async function claimRun(db: Kysely<Database>, id: string): Promise<void> {
  await db
    .updateTable(T)
    .set({
      status: "running",
      heartbeat_at: new Date(),
      host: hostname(),
      pid: process.pid,
      finished_at: null,
      closing_sends: null,
      // An earlier close's counts are not this attempt's: the close (or the settling of an
      // abandoned run) writes the true ones.
      counts: "{}",
    })
    .where("id", "=", id)
    .execute();
}

/**
 * Closes a run with its final status and exit code. `counts` and `summary` are kept when omitted
 * (a run that fails keeps what it had); `error` says why a run did not complete.
 *
 * @example
 *   await finishRun(db, runId, { status: "failed", exitCode: 1, error: "EACCES on --out" });
 */
export async function finishRun(
  db: Kysely<Database>,
  id: string,
  result: {
    status: RunStatus;
    exitCode: number;
    counts?: Record<string, number>;
    summary?: unknown;
    error?: string | null;
  },
): Promise<void> {
  await db
    .updateTable(T)
    .set({
      status: result.status,
      exit_code: result.exitCode,
      finished_at: new Date(),
      error: result.error ?? null,
      ...(result.counts ? { counts: JSON.stringify(result.counts) } : {}),
      ...(result.summary !== undefined ? { summary: JSON.stringify(result.summary) } : {}),
    })
    .where("id", "=", id)
    .execute();
}

/**
 * Writer runs (apply, reconcile, revert) that did not complete and still have actions that are not final:
 * what a crash, a cancel or a failure left to resume. Call it while holding the writer lock.
 *
 * @example
 *   const unfinished = await unfinishedWriterRuns(db);
 */
export async function unfinishedWriterRuns(db: Kysely<Database>): Promise<Run[]> {
  return db
    .selectFrom(T)
    .selectAll()
    .where("status", "in", ["running", "interrupted", "failed"])
    .where("mode", "in", [...WRITER_MODES])
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom(`${TOOL_TABLES.actions} as a`)
          .select(sql`1`.as("one"))
          .whereRef("a.run_id", "=", `${T}.id`)
          .where("a.status", "in", ["pending", "in_flight", "ambiguous"]),
      ),
    )
    .orderBy("started_at")
    .execute();
}

/**
 * Runs still marked running although no process runs them (we hold the lock): mark them
 * interrupted, except `exceptId`.
 *
 * @example
 *   await markStaleRunsInterrupted(db, resumeRunId);
 */
export async function markStaleRunsInterrupted(
  db: Kysely<Database>,
  exceptId?: string,
): Promise<number> {
  let q = db
    .updateTable(T)
    .set({ status: "interrupted", finished_at: new Date() })
    .where("status", "=", "running")
    .where("mode", "in", [...WRITER_MODES]);
  if (exceptId) q = q.where("id", "<>", exceptId);
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/**
 * Records what a run read, in typed columns a resume reads back: the source counts and how the
 * platform state was read.
 *
 * @example
 *   await saveRunSource(db, runId, { source_rows_read: 10, source_candidates: 2,
 *     source_anomalies: 0, strategy: "bulk" });
 */
export async function saveRunSource(
  db: Kysely<Database>,
  id: string,
  read: Pick<Run, "source_rows_read" | "source_candidates" | "source_anomalies" | "strategy">,
): Promise<void> {
  await db.updateTable(T).set(read).where("id", "=", id).execute();
}

/**
 * The given runs, if still `running`, become `interrupted`.
 *
 * @example
 *   await markRunsInterrupted(db, [settledRunId]);
 */
export async function markRunsInterrupted(db: Kysely<Database>, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable(T)
    .set({ status: "interrupted", finished_at: new Date() })
    .where("id", "in", ids)
    .where("status", "=", "running")
    .execute();
}

/**
 * The latest runs, newest first.
 *
 * @example
 *   for (const run of await listRuns(db, 20)) print(run.id, run.status);
 */
export async function listRuns(db: Kysely<Database>, limit: number): Promise<Run[]> {
  return db
    .selectFrom(T)
    .selectAll()
    .orderBy("started_at", "desc")
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
}

/**
 * The last completed run of a mode before `beforeId` (reconcile compares its findings with it).
 *
 * @example
 *   const prev = await previousCompletedRun(db, "reconcile", runId);
 */
export async function previousCompletedRun(
  db: Kysely<Database>,
  mode: RunMode,
  beforeId: string,
): Promise<Run | undefined> {
  return db
    .selectFrom(T)
    .selectAll()
    .where("mode", "=", mode)
    .where("status", "=", "completed")
    .where("id", "<", beforeId)
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
}

/**
 * The run a live writer is executing (for "who holds the lock" messages).
 *
 * @example
 *   const holder = await latestRunningWriter(db);
 */
export async function latestRunningWriter(db: Kysely<Database>): Promise<Run | undefined> {
  return db
    .selectFrom(T)
    .selectAll()
    .where("status", "=", "running")
    .where("mode", "in", [...WRITER_MODES])
    .orderBy(sql`heartbeat_at`, "desc")
    .limit(1)
    .executeTakeFirst();
}

/**
 * The latest writer run (apply, reconcile, revert), whatever its status: what `status` shows when
 * no run is named.
 *
 * @example
 *   const run = await latestWriterRun(db);
 */
export async function latestWriterRun(db: Kysely<Database>): Promise<Run | undefined> {
  return db
    .selectFrom(T)
    .selectAll()
    .where("mode", "in", [...WRITER_MODES])
    .orderBy("started_at", "desc")
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
}
