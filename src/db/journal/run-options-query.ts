/** The options recorded with a run, rewritten when a resume changes its rate or concurrency. */
import type { Kysely } from "kysely";
import { type Database, TOOL_TABLES } from "../schema.ts";

/**
 * Replaces the run's recorded options (secret-free, as `insertRun` stored them).
 *
 * @example
 *   await saveRunOptions(db, runId, { ...options, rate: 8 });
 */
export async function saveRunOptions(
  db: Kysely<Database>,
  id: string,
  options: Record<string, unknown>,
): Promise<void> {
  await db
    .updateTable(TOOL_TABLES.runs)
    .set({ options: JSON.stringify(options) })
    .where("id", "=", id)
    .execute();
}
