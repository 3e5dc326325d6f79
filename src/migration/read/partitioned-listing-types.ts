/** What a partitioned listing (`partitioned-listing.ts`) is given, and what it tells of its run. */
import type { Logger } from "../../log.ts";
import type { Identity, ListIdentitiesOptions } from "../../platform/index.ts";

export interface PartitionedListingOptions {
  /** The client's listing (`client.listIdentities`); each window pages it with its own cursor. */
  readonly list: (opts: ListIdentitiesOptions) => AsyncGenerator<Identity[]>;
  /** `control_types`: e.g. ["SELL_ONLY"] for the filtered listing; none for bulk. */
  readonly controlTypes?: readonly string[];
  /** At most this many cursors at once (--listing-parallelism); 1 reads a single cursor. */
  readonly maxParallel: number;
  /** The path's current rate budget, requests/s. */
  readonly rate: () => number;
  /** Page latency measured so far (ms), or null before the first answer. */
  readonly latencyMs: () => number | null;
  /** A previous run's page latency, to open both ends at once before anything is measured. */
  readonly latencyHintMs?: number | null;
  /** Identities the listing is expected to hold (a previous run's count), when known. */
  readonly expectedItems?: number | null;
  /**
   * Stores one page of new identities. Pages of different windows may be stored at once; they
   * never hold the same identity.
   */
  readonly onPage: (identities: Identity[]) => Promise<void>;
  /** Identities per page (default 1000, the platform's maximum). */
  readonly pageSize?: number;
  /** Attempts per window after the client's own retries gave up (default 3). */
  readonly windowAttempts?: number;
  readonly retryBaseMs?: number;
  readonly logger?: Logger;
  readonly signal?: AbortSignal;
}

export interface ListingStats {
  /** Pages received (requests that answered). */
  readonly pages: number;
  /** Distinct identities stored. */
  readonly identities: number;
  /** Most cursors that ran at once. */
  readonly peakParallel: number;
  /** Windows the listing ended with. */
  readonly windows: number;
  /** Windows restarted alone after a failure. */
  readonly windowRetries: number;
  /** Identities read twice where two cursors met on one millisecond, and stored once. */
  readonly duplicates: number;
  readonly createdAtMin: string | null;
  readonly createdAtMax: string | null;
}
