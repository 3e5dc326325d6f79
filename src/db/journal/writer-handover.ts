import { type Kysely, sql } from "kysely";
import { type Database, TOOL_TABLES, WRITER_MODES } from "../schema.ts";

/** Sends by path template, epoch ms. */
export type Sends = Readonly<Record<string, readonly number[]>>;

/** The last sign of life of the writer that ran last on this database, whatever its status. */
export interface LastWriter {
  readonly finishedAt: Date | null;
  /** Its latest heartbeat, or its start when it never beat. */
  readonly aliveAt: Date;
  /** The sends of its process's last second, when that process recorded them as it let go. */
  readonly closingSends: Sends | null;
}

/**
 * The writer run (apply, reconcile, revert) whose last sign of life is the latest. Called by a
 * writer once it holds the writer lock, so that run's process is gone: it sent nothing after now.
 *
 * @example
 *   const last = await lastWriter(db); // { finishedAt: null, aliveAt: 2026-11-29T09:00:04Z, ... }
 */
export async function lastWriter(db: Kysely<Database>): Promise<LastWriter | undefined> {
  const row = await db
    .selectFrom(TOOL_TABLES.runs)
    .select(["finished_at", "heartbeat_at", "started_at", "closing_sends"])
    .where("mode", "in", [...WRITER_MODES])
    .orderBy(sql`coalesce(finished_at, heartbeat_at, started_at)`, "desc")
    .limit(1)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    finishedAt: row.finished_at,
    aliveAt: row.heartbeat_at ?? row.started_at,
    closingSends: row.closing_sends,
  };
}

/**
 * Records the sends of this process's last second on the run it lets go (still holding the lock).
 *
 * @example
 *   await recordClosingSends(db, runId, { "/v2/identity/controls": [1764406800123] });
 */
export async function recordClosingSends(
  db: Kysely<Database>,
  runId: string,
  sends: Sends,
): Promise<void> {
  await db
    .updateTable(TOOL_TABLES.runs)
    .set({ closing_sends: JSON.stringify(sends) })
    .where("id", "=", runId)
    .execute();
}

/** How a writer that took over from the last one starts: counting its sends, or holding. */
export type Handover = { readonly sends: Sends } | { readonly holdUntil: number } | null;

/**
 * How a writer taking over from `last` starts, so that no one-second window the platform counts
 * holds more than the cap of the sends of both processes:
 * - `last` recorded its closing sends: count them in this process's cap (no wait unless they fill
 *   it);
 * - `last` finished without recording them: send nothing until a second and `guardMs` after its
 *   finish (never more than that from now);
 * - `last` died without finishing (SIGKILL, a crash) within its heartbeat's interval: it sent
 *   nothing after now, when the lock is ours, so wait a second and `guardMs` from now;
 * - otherwise, nothing to wait for.
 *
 * @example
 *   handover({ finishedAt: null, aliveAt: new Date(now - 2000), closingSends: null }, now, 10_000, 20)
 *   // { holdUntil: now + 1020 }
 */
export function handover(
  last: LastWriter | undefined,
  nowMs: number,
  heartbeatMs: number,
  guardMs: number,
): Handover {
  if (!last) return null;
  const after = 1000 + guardMs;
  if (last.finishedAt) {
    if (last.closingSends) return { sends: last.closingSends };
    const until = Math.min(last.finishedAt.getTime(), nowMs) + after;
    return until > nowMs ? { holdUntil: until } : null;
  }
  return last.aliveAt.getTime() + heartbeatMs + after > nowMs ? { holdUntil: nowMs + after } : null;
}
