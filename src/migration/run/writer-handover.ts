/**
 * The hand-over between writer processes on one database: the platform counts requests per second
 * whichever process sends them, so a writer's one-second cap also counts the last second of the
 * writer before it (a killed apply this run resumes, an interrupted reconcile, a finished one).
 */
import type { Kysely } from "kysely";
import { handover, lastWriter, recordClosingSends } from "../../db/journal/writer-handover.ts";
import type { Database } from "../../db/schema.ts";
import { CAP_GUARD_MS, type PlatformClient } from "../../platform/index.ts";
import { HEARTBEAT_MS } from "./run-lifecycle.ts";

interface HandoverDeps {
  readonly handle: { readonly db: Kysely<Database> };
  readonly client: Pick<PlatformClient, "handover">;
}

/**
 * Counts the last writer's closing sends in this client's caps, or holds every request until its
 * last second is over. Call it once the writer lock is held (its holder is gone), before any send.
 *
 * @example
 *   await takeOverFromLastWriter({ handle, client });
 */
export async function takeOverFromLastWriter(deps: HandoverDeps): Promise<void> {
  const now = Date.now();
  const how = handover(await lastWriter(deps.handle.db), now, HEARTBEAT_MS, CAP_GUARD_MS);
  if (how && "sends" in how) deps.client.handover.addSends(how.sends);
  else if (how) deps.client.handover.holdUntil(how.holdUntil);
}

/**
 * Records this client's last second of sends on `runId`, for the next writer. Call it while the
 * writer lock is still held. Never throws: the run's own outcome matters more (the next writer
 * then holds a second instead).
 *
 * @example
 *   await handOverToNextWriter({ handle, client }, runId);
 */
export async function handOverToNextWriter(deps: HandoverDeps, runId: string): Promise<void> {
  await recordClosingSends(deps.handle.db, runId, deps.client.handover.recentSends()).catch(
    () => {},
  );
}
