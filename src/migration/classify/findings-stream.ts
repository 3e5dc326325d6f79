/**
 * A listing's pages and their findings, so that little is left once its last page is in.
 *
 * The source pass is ordered by identity id (or storage order), the listing by created_at (in
 * windows read side by side), so no identity range is "passed" by both until one of them is
 * complete. The source pass is the faster (it waits on the database, the listing on the rate
 * budget), so it is the one waited for:
 *
 * - a page listed after the source rows are stored is classified as it arrives, from the page
 *   itself and the source pass's {@link SourceIndex} (no query while it holds the whole source),
 *   and stored with its findings in one transaction;
 * - a page listed before that waits in memory, its ids packed in 16 bytes each
 *   ({@link PackedIds}), and is classified the same way once the source rows are stored; nothing
 *   of it reaches the database before;
 * - past `memoryBytes` of such pages (a source pass much slower than the listing), a page is
 *   stored instead: an identity holding a control with its controls, the others put aside in
 *   `listed_identities` (a bare heap, six times cheaper than the snapshot), since nine in ten are
 *   not in the source and matter to no finding. Once the source rows are stored, the put-aside
 *   identities the source holds move to the snapshot in one statement, and a catch-up classifies
 *   what was stored so far, in keyset ranges of identity ids, each committed with its findings;
 * - once the listing is complete, what no page listed is classified: under bulk a candidate absent
 *   from the complete listing is not found; under filtered it holds no active SELL_ONLY, and it is
 *   read by id (`finish`'s reader) for its legacy fields, or to learn that it does not exist.
 *
 * An identity is classified once: a copy the listing serves again is dropped (`listed-once.ts`), a
 * page classified as it arrives commits its snapshot rows with its findings, and the catch-up skips
 * what is already classified. Before an identity holding a SELL_ONLY is classified, its source row
 * is looked up by id if the source pass did not keep it (it has no flag true), so
 * `unknown_to_source` keeps its meaning.
 *
 * Memory does not grow with the source: the source index holds a bounded number of ids
 * (`indexIds`); past them, a page's ids the index does not hold are claimed, and their source rows
 * read, in one statement (`claimListed`), and the unlisted candidates come from SQL as well.
 *
 * The stream's phases (holding, releasing, listing over, failed, closed) and their transitions
 * are in `findings-phase.ts`; `FindingsRun` holds one and changes it only through them.
 */

import pMap from "p-map";
import { claimListed, forgetClaims } from "../../db/journal/claim-queries.ts";
import {
  insertInvalidRowFindings,
  listedInterestingPage,
  unclassifiedObservations,
} from "../../db/journal/finding-queries.ts";
import { analyzeRunTables, moveListedToSnapshot } from "../../db/journal/snapshot-queries.ts";
import { type HeldPage, packHeldPage, stagePage, unpackHeldPages } from "../read/held-pages.ts";
import type { IdentityReader, ListedIdentity } from "../read/listed-identity.ts";
import { SourceIndex } from "../read/source-index.ts";
import type { FindingsOptions } from "./findings.ts";
import { heldPagesBytes } from "./findings-memory.ts";
import {
  FIRST_FINDINGS_STATE,
  type FindingsEvent,
  type FindingsState,
  failureOf,
  nextFindingsState,
  releases,
  sourceStored,
} from "./findings-phase.ts";
import type {
  FindingsStream,
  FindingsStreamContext,
  FindingsStreamCounts,
  FindingsStreamOptions,
} from "./findings-stream-types.ts";
import { ListedClassifier } from "./listed-classifier.ts";
import { ListedOnce, lastCopies } from "./listed-once.ts";
import { classifyUnlisted } from "./unlisted-candidates.ts";

/** Unlisted candidates classified at once. */
const RANGE = 5000;
/** Identities a catch-up range classifies at once (their observations, claims and findings held). */
const CATCH_UP_RANGE = 2000;

/** Held pages classified side by side once the source rows are stored (beside the live pages). */
const RELEASE_WORKERS = 2;
/**
 * Held pages classified in one statement once the listing is over: nothing waits on the event
 * loop's timers then, and fewer, larger statements finish the rest sooner.
 */
const RELEASE_PAGES_AFTER_LISTING = 4;

/**
 * Starts the findings of one run's listing. Hand `index` to the source pass, `page` to the
 * listing; call `sourceComplete` once the source rows are stored, then `finish` once the listing
 * is complete; `close` in a `finally`.
 *
 * @example
 *   const stream = startFindingsStream(ctx, { journalCreates: true, journalDeletes: false });
 *   try {
 *     await Promise.all([
 *       loadSource(db, source, runId, progress, signal, stream.index).then(() => stream.sourceComplete()),
 *       listPlatform(ctx, "bulk", hint, (page) => stream.page(page)),
 *     ]);
 *     await stream.finish("bulk");
 *   } finally {
 *     await stream.close();
 *   }
 */
export function startFindingsStream(
  ctx: FindingsStreamContext,
  options: FindingsStreamOptions,
): FindingsStream {
  const run = new FindingsRun(ctx, options);
  return {
    index: run.index,
    page: (served) => run.page(served),
    sourceComplete: () => run.sourceComplete(),
    finish: (kind: "bulk" | "filtered", read?: IdentityReader) => run.finish(kind, read),
    close: () => run.close(),
  };
}

/** One run's findings stream: its phase (`findings-phase.ts`), the held pages and the counts. */
export class FindingsRun {
  readonly index: SourceIndex;
  readonly #ctx: FindingsStreamContext;
  readonly #memoryBytes: number;
  readonly #findingOptions: Omit<FindingsOptions, "unlistedHoldNoSellOnly">;
  readonly #once: ListedOnce;
  readonly #classifier: ListedClassifier;
  readonly #counts = { asListed: 0, held: 0, caughtUp: 0, unlisted: 0, omitted: 0 };
  #state: FindingsState = FIRST_FINDINGS_STATE;
  readonly #held: HeldPage[] = [];
  #heldBytes = 0;
  /** Identities of pages stored before the source rows (past `memoryBytes`). */
  #spilled = 0;
  /** Settles once every page put aside so far is stored. */
  #staged: Promise<unknown> = Promise.resolve();
  #release: Promise<void> | null = null;

  constructor(ctx: FindingsStreamContext, options: FindingsStreamOptions) {
    const { memoryBytes, indexIds, outsideIds, expectedIds, ...findingOptions } = options;
    this.#ctx = ctx;
    this.#findingOptions = findingOptions;
    this.index = new SourceIndex(indexIds);
    this.#memoryBytes = heldPagesBytes({ memoryBytes, expectedIds }, this.index);
    this.#once = new ListedOnce(
      this.index,
      (batch, ids, stored) => claimListed(ctx.db, ctx.runId, batch, ids, stored),
      outsideIds,
    );
    this.#classifier = new ListedClassifier(ctx, findingOptions, this.index, this.#once);
  }

  get state(): FindingsState {
    return this.#state;
  }

  /** Every change of phase goes through here. */
  #on(event: FindingsEvent): void {
    this.#state = nextFindingsState(this.#state, event);
  }

  #rethrow(): void {
    const failure = failureOf(this.#state);
    if (failure) throw failure.err;
  }

  async page(served: readonly ListedIdentity[]): Promise<void> {
    this.#rethrow();
    if (served.length === 0) return;
    if (sourceStored(this.#state)) {
      // Read after the await: pages are classified side by side, so `+= await` would lose counts.
      const classified = await this.#classifier.page(served);
      this.#counts.asListed += classified;
      return;
    }
    // A page holds each identity once (its last copy) before it is held or stored.
    const { items: identities, dropped } = lastCopies(served);
    this.#once.countRepeats(dropped);
    if (this.#heldBytes < this.#memoryBytes) {
      const page = packHeldPage(identities);
      this.#held.push(page);
      this.#heldBytes += page.bytes;
      return;
    }
    this.#spilled += identities.length;
    // Chained in the same tick as the check above, so `sourceComplete` waits for this page.
    const write = stagePage(this.#ctx.db, this.#ctx.runId, identities);
    this.#staged = Promise.allSettled([this.#staged, write]);
    await write;
  }

  async sourceComplete(): Promise<number> {
    const { db, runId } = this.#ctx;
    this.#on({ kind: "source_stored" });
    this.#ctx.logger.debug(
      `findings: ${this.#held.length} listed pages held in memory (${(this.#heldBytes / 1048576).toFixed(1)} MB), ${this.#spilled} listed identities put aside in the database, until the source rows were stored`,
    );
    await this.#staged;
    const moved = this.#spilled > 0 ? await moveListedToSnapshot(db, runId) : 0;
    await insertInvalidRowFindings(db, runId);
    // Pages held in memory are classified as if listed now; what was stored is caught up from
    // the database (statistics of this run, not the previous one's, for its queries).
    if (this.#spilled > 0) await analyzeRunTables(db, "snapshot");
    const background = async () => {
      await this.#releaseHeld();
      if (this.#spilled > 0) await this.#catchUpListed();
    };
    this.#release = background().catch((err) => this.#on({ kind: "failed", err }));
    return moved;
  }

  async finish(kind: "bulk" | "filtered", read?: IdentityReader): Promise<FindingsStreamCounts> {
    if (!this.#release) throw new Error("findings stream: finish() before sourceComplete()");
    this.#on({ kind: "listing_over" });
    await this.#release;
    this.#rethrow();
    await this.#classifyUnlisted(kind, read);
    const grouped = this.#classifier.grouped;
    if (grouped) {
      this.#ctx.logger.debug(
        `findings: ${grouped.batches} batches stored in ${grouped.statements} statements (those that arrived while one ran went together)`,
      );
    }
    // Statistics for the executor's queries of the journal; a plan's are taken beside its
    // report (`pipeline.ts`), which does not need them.
    if (this.#findingOptions.journalCreates || this.#findingOptions.journalDeletes) {
      await analyzeRunTables(this.#ctx.db, "journal");
    }
    return { ...this.#counts, actions: this.#classifier.actions, repeats: this.#once.repeats };
  }

  async close(): Promise<void> {
    this.#on({ kind: "closed" });
    await this.#staged;
    await this.#release?.catch(() => {});
  }

  /**
   * Classifies the pages held in memory, oldest first, freeing each as it goes, a few side by
   * side. While the listing runs, a page at a time, after the event loop's other work: released
   * all at once, they kept the loop busy for a second, and the rate budget's timers fired late
   * (tokens lost). After it, nothing is paced any more.
   */
  async #releaseHeld(): Promise<void> {
    await pMap(
      this.#heldBatches(),
      async (pages) => {
        const classified = await this.#classifier.page(unpackHeldPages(pages, this.#ctx.runId));
        this.#counts.asListed += classified;
        this.#counts.held += classified;
      },
      { concurrency: RELEASE_WORKERS },
    );
  }

  /** The held pages, taken when a worker is free: one while the listing runs, more after it. */
  async *#heldBatches(): AsyncGenerator<HeldPage[]> {
    while (this.#held.length > 0 && releases(this.#state)) {
      const paced = this.#state.phase === "releasing";
      if (paced) await new Promise<void>((resolve) => setImmediate(resolve));
      const pages = this.#held.splice(0, paced ? 1 : RELEASE_PAGES_AFTER_LISTING);
      if (pages.length === 0) return;
      for (const page of pages) this.#heldBytes -= page.bytes;
      yield pages;
    }
  }

  async #catchUpListed(): Promise<void> {
    const { db, runId } = this.#ctx;
    let after: string | null = null;
    while (releases(this.#state)) {
      const ids = await listedInterestingPage(db, runId, after, CATCH_UP_RANGE);
      if (ids.length === 0) return;
      after = ids[ids.length - 1] ?? null;
      const rows = await unclassifiedObservations(db, runId, ids);
      const { items: claimed, sources } = await this.#once.claimIds(rows);
      this.#once.countRepeats(rows.length - claimed.length);
      const classified = await this.#classifier.classify(claimed, sources);
      this.#counts.caughtUp += classified;
    }
  }

  /** The candidates no page held: the index knows which were listed, `listed_claims` the rest. */
  async #classifyUnlisted(kind: "bulk" | "filtered", read?: IdentityReader): Promise<void> {
    const { db, runId } = this.#ctx;
    // Past the bound, read from SQL even if no page asked it (a filtered listing may show none),
    // unless every candidate the index refused was claimed.
    const pastBound = this.#once.claimedPastCandidates < this.index.refusedCandidates;
    const { classified, notFound, found } = await classifyUnlisted(
      { db, runId, index: this.index, pastBound, classifier: this.#classifier },
      RANGE,
      read,
    );
    // A bulk listing shows every identity: one it left out that a read found, it omitted.
    if (kind === "bulk") this.#counts.omitted += found;
    this.#counts.unlisted += classified;
    if (this.#once.inDatabase) await forgetClaims(db, runId);
    if (notFound > 0) {
      this.#ctx.logger.warn(
        `${notFound} candidate identities absent from the ${kind === "bulk" ? "platform's" : "SELL_ONLY"} listing are unknown to the platform (404)`,
      );
    }
  }
}
