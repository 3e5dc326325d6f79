/**
 * The stage a running run is in, as `status` names it: noted in the run's report at each change
 * (`saveRunStage`), so that `status` from another terminal or machine reads it on either database.
 * While the run writes, its steering reports `writing` with its rates (`run-control.ts`).
 */
import type { Kysely } from "kysely";
import { saveRunStage } from "../../db/journal/run-control-queries.ts";
import type { Database } from "../../db/schema.ts";

export type RunStage =
  | "reading the source"
  | "reading the platform"
  | "reading the source and the platform"
  | "classifying"
  | "writing"
  | "reporting";

/**
 * Notes `stage` for run `runId`. Never fails the run: a note that cannot be written leaves
 * `status` naming the stage before, and the database's trouble surfaces in the run's next write.
 *
 * @example
 *   await noteStage(db, runId, "classifying");
 */
export async function noteStage(
  db: Kysely<Database>,
  runId: string,
  stage: RunStage,
): Promise<void> {
  await saveRunStage(db, runId, stage).catch(() => {});
}
