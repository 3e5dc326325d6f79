/**
 * A writer's first requests wait out the second in which the writer before it (a killed apply this
 * run resumes, an interrupted reconcile) may still have sent: the platform counts requests per
 * second whichever process sends them.
 */
import type { Kysely } from "kysely";
import { handoverAt, lastWriter } from "../../db/journal/writer-handover.ts";
import type { Database } from "../../db/schema.ts";
import { CAP_GUARD_MS, type PlatformClient } from "../../platform/index.ts";
import { HEARTBEAT_MS } from "./run-lifecycle.ts";

/**
 * Holds every request of `client` until the last writer's final second has passed. Call it once the
 * writer lock is held (its holder is gone), before anything is sent.
 *
 * @example
 *   await holdForPreviousWriter({ handle, client });
 */
export async function holdForPreviousWriter(deps: {
  readonly handle: { readonly db: Kysely<Database> };
  readonly client: Pick<PlatformClient, "holdUntil">;
}): Promise<void> {
  const at = handoverAt(await lastWriter(deps.handle.db), Date.now(), HEARTBEAT_MS, CAP_GUARD_MS);
  if (at > Date.now()) deps.client.holdUntil(at);
}
