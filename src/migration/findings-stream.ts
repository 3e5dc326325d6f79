/**
 * A listing's pages and their findings, so that little is left once its last page is in.
 *
 * The source pass is ordered by identity id (or storage order), the listing by created_at (in
 * windows read side by side), so no identity range is "passed" by both until one of them is
 * complete. The source pass is the faster (it waits on the database, the listing on the rate
 * budget), so it is the one waited for:
 *
 * - a page listed after the source rows are stored is classified as it arrives, from the page
 *   itself and the source pass's {@link SourceIndex} (no query), and stored with its findings in
 *   one transaction;
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
 * An identity is classified once: a copy the listing serves again is dropped (`listed-once.ts`), a page classified as it arrives
 * commits its snapshot rows with its findings, and the catch-up skips what is already classified.
 * Before an identity holding a SELL_ONLY is classified, its source row is looked up by id if the
 * source pass did not keep it (it has no flag true), so `unknown_to_source` keeps its meaning.
 */
import {
  insertInvalidRowFindings,
  listedInterestingPage,
  type StoredObservation,
  unclassifiedObservations,
} from "../db/finding-queries.ts";
import { analyzeRunTables, moveListedToSnapshot } from "../db/snapshot-queries.ts";
import { type FindingsOptions, type SnapshotRows, storeFindings } from "./findings.ts";
import {
  holdsSellOnly,
  isCandidate,
  observeListed,
  observeUnlisted,
  stateRow,
} from "./findings-observations.ts";
import type { FindingsStream, FindingsStreamContext } from "./findings-stream-types.ts";
import { type HeldPage, packHeldPage, stagePage, unpackHeldPages } from "./held-pages.ts";
import type { IdentityReader, ListedIdentity, ReadIdentity } from "./listed-identity.ts";
import { ListedOnce, lastCopies } from "./listed-once.ts";
import { outsideSourceLookup } from "./outside-source-lookup.ts";
import { SourceIndex } from "./source-index.ts";
import { platformMarks } from "./three-way-listing.ts";

/** Identities a catch-up or unlisted range classifies at once. */
const RANGE = 5000;
/**
 * Listing pages held in memory before the source rows are stored, at most: about 30 kB a page of
 * 1000, so 32 MB is about a million listed identities, more than a source pass of a million rows
 * lets through even when nothing but the machine limits the listing.
 */
export const HELD_PAGES_BYTES = 32 * 1024 * 1024;
const NOT_LISTED = "absent from a complete listing of the platform's identities";

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
  options: Omit<FindingsOptions, "unlistedHoldNoSellOnly"> & {
    /** Bytes of pages held in memory before the source rows are stored (default 32 MB). */
    readonly memoryBytes?: number;
  },
): FindingsStream {
  const { db, runId } = ctx;
  const { memoryBytes = HELD_PAGES_BYTES, ...findingOptions } = options;
  const index = new SourceIndex();
  const once = new ListedOnce(index);
  const counts = { asListed: 0, held: 0, caughtUp: 0, unlisted: 0, actions: 0 };
  const staging = new Set<Promise<void>>();
  const held: HeldPage[] = [];
  let heldBytes = 0;
  /** Identities of pages stored before the source rows (past `memoryBytes`). */
  let spilled = 0;
  let release: Promise<void> | null = null;
  let sourceStored = false;
  /** The listing has ended (`finish`): held pages go several to a statement, without yielding. */
  let listingOver = false;
  let closed = false;
  let failure: { err: unknown } | null = null;

  const rethrow = () => {
    if (failure) throw failure.err;
  };

  const lookUpOutside = outsideSourceLookup(db, ctx.source, runId, index);

  /** Classifies observed identities (candidates and SELL_ONLY holders) and stores the findings. */
  async function classify(
    observed: readonly StoredObservation[],
    snapshot?: SnapshotRows,
    unlisted = false,
  ): Promise<number> {
    await lookUpOutside(observed);
    // What is classified here was listed (or is the unlisted rest): the rest is told apart by it.
    if (!unlisted) for (const o of observed) index.markListed(o.identity_id);
    // Unlisted ones come from the index's own candidates.
    const rows = observed
      .filter(
        (o) =>
          unlisted ||
          holdsSellOnly(o.controls) ||
          isCandidate(index.get(o.identity_id)) ||
          (platformMarks(o) && index.get(o.identity_id)?.valid === true),
      )
      .map(({ identity_id, ...o }) => stateRow(identity_id, index.get(identity_id), o));
    // Read after the await: pages are classified side by side, so `+= await` would lose counts.
    const actions = await storeFindings(db, runId, rows, findingOptions, snapshot);
    counts.actions += actions;
    return rows.length;
  }

  /** Before the source rows are stored, within `memoryBytes`: the page waits in memory. */
  function holdPage(identities: readonly ListedIdentity[]): void {
    const page = packHeldPage(identities);
    held.push(page);
    heldBytes += page.bytes;
  }

  /** Classifies the pages held in memory, oldest first, freeing each as it goes. */
  async function releaseHeld(): Promise<void> {
    await Promise.all(Array.from({ length: RELEASE_WORKERS }, releaseSome));
  }

  async function releaseSome(): Promise<void> {
    while (held.length > 0 && !failure && !closed) {
      // While the listing runs, a page at a time, after the event loop's other work: released
      // all at once, they kept the loop busy for a second, and the rate budget's timers fired
      // late (tokens lost). After it, nothing is paced any more.
      if (!listingOver) await new Promise<void>((resolve) => setImmediate(resolve));
      const pages = held.splice(0, listingOver ? RELEASE_PAGES_AFTER_LISTING : 1);
      if (pages.length === 0) return;
      for (const page of pages) heldBytes -= page.bytes;
      const identities = unpackHeldPages(pages, runId);
      const classified = await classifyPage(identities);
      counts.asListed += classified;
      counts.held += classified;
    }
  }

  /** After: the page and the source index say everything; one transaction stores both. */
  async function classifyPage(page: readonly ListedIdentity[]): Promise<number> {
    // Claimed before any await: pages classified side by side never both take an identity.
    const identities = once.claim(page);
    const { observed, snapshot } = observeListed(runId, identities, index);
    return classify(observed, snapshot);
  }

  async function catchUpListed(): Promise<void> {
    let after: string | null = null;
    while (!failure && !closed) {
      const ids = await listedInterestingPage(db, runId, after, RANGE);
      if (ids.length === 0) return;
      after = ids[ids.length - 1] ?? null;
      const rows = await unclassifiedObservations(db, runId, ids);
      const claimed = once.claimIds(rows);
      once.countRepeats(rows.length - claimed.length);
      const classified = await classify(claimed);
      counts.caughtUp += classified;
    }
  }

  return {
    index,

    async page(served) {
      rethrow();
      if (served.length === 0) return;
      if (sourceStored) {
        const classified = await classifyPage(served);
        counts.asListed += classified;
        return;
      }
      // A page holds each identity once (its last copy) before it is held or stored.
      const { items: identities, dropped } = lastCopies(served);
      once.countRepeats(dropped);
      if (heldBytes < memoryBytes) {
        holdPage(identities);
        return;
      }
      spilled += identities.length;
      // Added in the same tick as the check above, so `sourceComplete` waits for this page.
      const write = stagePage(db, runId, identities);
      staging.add(write);
      try {
        await write;
      } finally {
        staging.delete(write);
      }
    },

    async sourceComplete() {
      sourceStored = true;
      await Promise.allSettled([...staging]);
      const moved = spilled > 0 ? await moveListedToSnapshot(db, runId) : 0;
      await insertInvalidRowFindings(db, runId);
      // Pages held in memory are classified as if listed now; what was stored is caught up from
      // the database (statistics of this run, not the previous one's, for its queries).
      if (spilled > 0) await analyzeRunTables(db, "snapshot");
      const background = async () => {
        await releaseHeld();
        if (spilled > 0) await catchUpListed();
      };
      release = background().catch((err) => {
        failure ??= { err };
      });
      return moved;
    },

    async finish(kind: "bulk" | "filtered", read?: IdentityReader) {
      if (!release) throw new Error("findings stream: finish() before sourceComplete()");
      listingOver = true;
      await release;
      rethrow();
      // The candidates no page held: the index knows which were listed, so no query finds them.
      let notFound = 0;
      for (const ids of index.unlistedCandidates(RANGE)) {
        const reads: readonly ReadIdentity[] = read
          ? await read(ids)
          : ids.map((id) => ({ status: "not_found", id, error: NOT_LISTED }));
        const unlisted = observeUnlisted(runId, reads);
        notFound += unlisted.notFound;
        counts.unlisted += await classify(unlisted.observed, unlisted.snapshot, true);
      }
      if (notFound > 0) {
        ctx.logger.warn(
          kind === "bulk"
            ? `${notFound} candidate identities are absent from the platform's listing`
            : `${notFound} candidate identities absent from the SELL_ONLY listing are unknown to the platform (404)`,
        );
      }
      // Statistics for the executor's queries of the journal; a plan's are taken beside its
      // report (`pipeline.ts`), which does not need them.
      if (findingOptions.journalCreates || findingOptions.journalDeletes) {
        await analyzeRunTables(db, "journal");
      }
      return { ...counts, repeats: once.repeats };
    },

    async close() {
      closed = true;
      await Promise.allSettled([...staging]);
      await release?.catch(() => {});
    },
  };
}
