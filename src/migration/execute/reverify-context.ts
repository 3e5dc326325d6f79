/**
 * What re-verification needs, apart from how it runs (`reverify.ts`) and settles
 * (`reverify-settle.ts`), so that neither imports the other back.
 */
import type { Kysely } from "kysely";
import type { SourceConfig } from "../../config.ts";
import type { Database } from "../../db/schema.ts";
import type { Logger } from "../../log.ts";
import type { PlatformClient } from "../../platform/index.ts";
import type { ListingSettings } from "../read/snapshot.ts";
import type { WaitPolicy } from "./platform-wait.ts";

/** What re-verification needs; the executor's context provides it. */
export interface ReverifyContext {
  readonly db: Kysely<Database>;
  readonly client: PlatformClient;
  readonly runId: string;
  readonly logger: Logger;
  readonly signal?: AbortSignal;
  /** How a listing is read; without it, the client's budget and --concurrency cursors at most. */
  readonly listing?: ListingSettings;
  /**
   * Whether a pending create the platform's own migration will now make waits for it (issue 27);
   * without it the platform's legacy fields are not re-read (two-way, as a revert).
   */
  readonly waitForPlatform?: WaitPolicy;
  /** `source`: the relation whose flags are re-read before a send; without it, only the platform. */
  readonly options?: {
    readonly platform: { readonly concurrency: number };
    readonly source?: SourceConfig;
  };
}
