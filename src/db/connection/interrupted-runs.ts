/**
 * What every open of the database and `status`'s one statement (`status-query.ts`) share about
 * runs left `running` by a process that is gone: when a plan counts as gone, and what the operator
 * is told. Kept apart from `abandoned-runs.ts` (its kysely queries) so that `status` on
 * PostgreSQL loads no kysely.
 */
import type { Logger } from "../../log.ts";

/** A plan run whose heartbeat (every 10 s) is older than this has no live process. */
export const PLAN_STALE_AFTER = "5 minutes";

/** Says how many runs were just marked interrupted, and how to go on with them. */
export function reportMarkedInterrupted(logger: Logger, marked: number): void {
  if (marked > 0) {
    logger.warn(
      `Marked ${marked} run(s) interrupted: a process left them running when it lost the database connection or was stopped. \`controls-migrate runs\` lists them; an apply or reconcile continues with --resume RUN_ID, a revert with: revert RUN_ID --resume REVERT_ID.`,
    );
  }
}
