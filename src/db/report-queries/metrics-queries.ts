import type { Kysely } from "kysely";
import { type Database, TOOL_TABLES } from "../schema.ts";

/**
 * When the latest successful reconcile ended: completed with exit code 0 (in sync) or 2 (only
 * report-only findings left), so every action it took succeeded. Null if there was none.
 *
 * @example
 *   const at = await lastSuccessfulReconcile(db); // Date | null
 */
export async function lastSuccessfulReconcile(db: Kysely<Database>): Promise<Date | null> {
  const row = await db
    .selectFrom(TOOL_TABLES.runs)
    .select("finished_at")
    .where("mode", "=", "reconcile")
    .where("status", "=", "completed")
    .where("exit_code", "in", [0, 2])
    .where("finished_at", "is not", null)
    .orderBy("finished_at", "desc")
    .limit(1)
    .executeTakeFirst();
  return row?.finished_at ?? null;
}
