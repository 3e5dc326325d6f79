/**
 * The findings stream's interface (`findings-stream.ts`): the context it runs in, the methods the
 * source pass and the listing call (`page`, `sourceComplete`, `finish`, `close`), and the counts
 * of what it classified, and when, that `finish` resolves with.
 */
import type { Kysely } from "kysely";
import type { SourceConfig } from "../../config.ts";
import type { Database } from "../../db/schema.ts";
import type { Logger } from "../../log.ts";
import type { IdentityReader, ListedIdentity } from "../read/listed-identity.ts";
import type { SourceIndex } from "../read/source-index.ts";
import type { FindingsOptions } from "./findings.ts";

export interface FindingsStreamContext {
  readonly db: Kysely<Database>;
  readonly source: SourceConfig;
  readonly runId: string;
  readonly logger: Logger;
  /**
   * The database runs one statement at a time (PGlite, in its worker): the pages' writes that
   * arrive while one runs are grouped into the next statement (`grouped-writes.ts`).
   */
  readonly serialDatabase?: boolean;
}

export type FindingsStreamOptions = Omit<FindingsOptions, "unlistedHoldNoSellOnly"> &
  FindingsMemory;

/** What the findings stream may hold in memory; past it, the database holds the rest. */
export interface FindingsMemory {
  /**
   * Bytes of pages held in memory before the source rows are stored (default 32 MB, 2 MB when
   * `expectedIds` is past the index's bound: `findings-memory.ts`).
   */
  readonly memoryBytes?: number;
  /** Source rows the source pass is expected to keep (the flagged rows counted before it). */
  readonly expectedIds?: number;
  /**
   * Ids the source index holds at most (default `SOURCE_INDEX_IDS`); past them, claims and source
   * states go through the database (`listed-once.ts`).
   */
  readonly indexIds?: number;
  /**
   * Ids outside the source index claimed in memory at most, while it is complete (default
   * `OUTSIDE_PER_INDEX_ID` times `indexIds`); past them, in the database (`listed-once.ts`).
   */
  readonly outsideIds?: number;
}

/** What the stream classified, and when. */
export interface FindingsStreamCounts {
  /** Identities classified from pages as they were listed (or as they left memory). */
  readonly asListed: number;
  /** Of those, identities listed before the source pass was complete and held in memory. */
  readonly held: number;
  /** Identities listed before the source pass was complete and stored, caught up by id range. */
  readonly caughtUp: number;
  /** Candidates no page listed, classified once the listing was complete. */
  readonly unlisted: number;
  /** Of those, after a bulk listing: candidates it left out that a read by id found. */
  readonly omitted: number;
  readonly actions: number;
  /** Copies of identities the listing served again, dropped (a platform anomaly). */
  readonly repeats: number;
}

export interface FindingsStream {
  /** What the source pass kept, by id: hand it to `loadSource`. */
  readonly index: SourceIndex;
  /**
   * Stores one listing page: put aside before the source rows are stored, classified and stored
   * with its findings after. Rejects if the catch-up failed, which stops the listing.
   */
  page(identities: readonly ListedIdentity[]): Promise<void>;
  /**
   * The source rows are stored (and `index` is complete): moves the identities put aside that the
   * source holds to the snapshot, starts the catch-up, and returns how many moved.
   */
  sourceComplete(): Promise<number>;
  /**
   * The listing is complete: classifies what is left and resolves when every finding is stored.
   * After a filtered listing, the candidates it did not show are read by id with `read`.
   */
  finish(kind: "bulk", read?: IdentityReader): Promise<FindingsStreamCounts>;
  finish(kind: "bulk" | "filtered", read: IdentityReader): Promise<FindingsStreamCounts>;
  /** Stops the catch-up (after a failure elsewhere); never throws. */
  close(): Promise<void>;
}
