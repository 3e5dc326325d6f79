/**
 * A revert whose confirmation was declined (or Ctrl-C at its prompt) wrote nothing: its pending
 * deletes are skipped as `declined`, the run is closed `declined`, and a new revert starts afresh.
 */
import type { Kysely } from "kysely";
import { skipPending } from "../../db/journal/journal-queries.ts";
import { finishRun } from "../../db/journal/run-queries.ts";
import type { Database } from "../../db/schema.ts";
import { ExitCode, UserError } from "../../errors.ts";

/** The revert's confirmation was declined: the run is recorded `declined` already. */
export class RevertDeclined extends UserError {}

/**
 * Records the decline and throws the error that tells the user.
 *
 * @example
 *   if (!(await confirm(writes))) await declineRevert(db, runId, ofRunId, signal.aborted);
 */
export async function declineRevert(
  db: Kysely<Database>,
  runId: string,
  ofRunId: string,
  interrupted: boolean,
): Promise<never> {
  await skipPending(db, runId, "declined");
  await finishRun(db, runId, {
    status: "declined",
    exitCode: interrupted ? ExitCode.interrupted : ExitCode.failed,
    error: interrupted ? "interrupted at the confirmation" : "not confirmed",
  });
  throw new RevertDeclined(
    `Not confirmed: nothing was written; revert run ${runId} is closed as declined, and a new revert of ${ofRunId} starts afresh.`,
  );
}
