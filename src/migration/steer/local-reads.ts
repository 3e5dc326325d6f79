/**
 * The running writer's answers to read commands on PGlite: `runs`, `show` and `report` from a
 * second terminal cannot open the data folder the writer holds, so they ask it through the local
 * channel and it answers from its own database handle, between its polls.
 */
import type { Kysely } from "kysely";
import type { ControlChange } from "../../db/journal/run-control-queries.ts";
import type { Database } from "../../db/schema.ts";
import { UserError } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import type { LocalChannel, LocalRequest } from "./local-channel.ts";
import { readCommandText } from "./read-commands.ts";

/** A request that steers the run. */
export type LocalChangeRequest = LocalRequest & { readonly change: ControlChange };

/**
 * Answers the read requests among `requests` and returns the steering ones, in their order.
 *
 * @example
 *   for (const r of await answerLocalReads(channel, db, logger, channel.takeRequests().requests)) ...
 */
export async function answerLocalReads(
  channel: LocalChannel | undefined,
  db: Kysely<Database>,
  logger: Logger,
  requests: readonly LocalRequest[],
): Promise<LocalChangeRequest[]> {
  const changes: LocalChangeRequest[] = [];
  for (const request of requests) {
    if (request.change) changes.push(request as LocalChangeRequest);
    else if (request.read && channel) {
      try {
        const stdout = await readCommandText(db, request.read);
        await channel.reply(request, { ok: true, message: "", stdout });
      } catch (err) {
        // A user's mistake (no such run) goes back to them; anything else is logged here too.
        const message = err instanceof Error ? err.message : String(err);
        if (!(err instanceof UserError))
          logger.warn(`A ${request.read.command} request failed: ${message}`);
        await channel.reply(request, { ok: false, message });
      }
    }
  }
  return changes;
}
