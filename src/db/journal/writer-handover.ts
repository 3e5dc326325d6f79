import { type Kysely, sql } from "kysely";
import { type Database, TOOL_TABLES, WRITER_MODES } from "../schema.ts";

/** The last sign of life of the writer that ran last on this database, whatever its status. */
export interface LastWriter {
  readonly finishedAt: Date | null;
  /** Its latest heartbeat, or its start when it never beat. */
  readonly aliveAt: Date;
}

/**
 * The writer run (apply, reconcile, revert) whose last sign of life is the latest. Called by a
 * writer once it holds the writer lock, so that run's process is gone: it sent nothing after now.
 *
 * @example
 *   const last = await lastWriter(db); // { finishedAt: null, aliveAt: 2026-11-29T09:00:04Z }
 */
export async function lastWriter(db: Kysely<Database>): Promise<LastWriter | undefined> {
  const row = await db
    .selectFrom(TOOL_TABLES.runs)
    .select(["finished_at", "heartbeat_at", "started_at"])
    .where("mode", "in", [...WRITER_MODES])
    .orderBy(sql`coalesce(finished_at, heartbeat_at, started_at)`, "desc")
    .limit(1)
    .executeTakeFirst();
  if (!row) return undefined;
  return { finishedAt: row.finished_at, aliveAt: row.heartbeat_at ?? row.started_at };
}

/**
 * When a writer that took over from `last` may send its first request (epoch ms): one second plus
 * `guardMs` after the last moment `last` could have sent, so that no one-second window the platform
 * counts holds the sends of both processes (each keeps its own per-second cap, and neither knows the
 * other's). A finished writer sent nothing after `finishedAt`. A writer that died without finishing
 * (SIGKILL, a crash) sent nothing after now, when the lock is ours, and nothing after its last
 * heartbeat's interval has passed: past that, no wait. 0 when nothing needs waiting for.
 *
 * @example
 *   handoverAt({ finishedAt: null, aliveAt: new Date(now - 2000) }, now, 10_000, 20) // now + 1020
 */
export function handoverAt(
  last: LastWriter | undefined,
  nowMs: number,
  heartbeatMs: number,
  guardMs: number,
): number {
  if (!last) return 0;
  const after = 1000 + guardMs;
  if (last.finishedAt) {
    // A clock that put the finish after now cannot hold us longer than a second.
    return Math.min(last.finishedAt.getTime(), nowMs) + after;
  }
  return last.aliveAt.getTime() + heartbeatMs + after > nowMs ? nowMs + after : 0;
}
