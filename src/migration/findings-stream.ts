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
import type { Kysely } from "kysely";
import type { SourceConfig } from "../config.ts";
import {
  type IdentityStateRow,
  insertInvalidRowFindings,
  listedInterestingPage,
  type StoredObservation,
  unclassifiedObservations,
} from "../db/finding-queries.ts";
import type { Database, NewSnapshotControl, NewSnapshotIdentity } from "../db/schema.ts";
import {
  analyzeRunTables,
  insertSourceRows,
  maxLookupSeq,
  moveListedToSnapshot,
  snapshotWrites,
  stageWrite,
} from "../db/snapshot-queries.ts";
import { lookupSourceRows } from "../db/source-reader.ts";
import { chainWrites } from "../db/unnest-insert.ts";
import type { Logger } from "../log.ts";
import { type FindingsOptions, type SnapshotRows, storeFindings } from "./findings.ts";
import {
  type IdentityReader,
  type ListedIdentity,
  NO_CONTROLS,
  type PackedHolder,
  packHolder,
  type ReadIdentity,
  unpackHolder,
} from "./listed-identity.ts";
import { ListedOnce, lastCopies } from "./listed-once.ts";
import { PackedIds, SourceIndex, type SourceState } from "./source-index.ts";
import { sourceRecord, sourceStateOf } from "./source-stage.ts";
import {
  legacyCode,
  legacyOfCode,
  legacySaid,
  legacyTrue,
  platformMarks,
  snapshotIdentity,
} from "./three-way-listing.ts";

export interface FindingsStreamContext {
  readonly db: Kysely<Database>;
  readonly source: SourceConfig;
  readonly runId: string;
  readonly logger: Logger;
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
  finish(kind: "bulk"): Promise<FindingsStreamCounts>;
  finish(kind: "filtered", read: IdentityReader): Promise<FindingsStreamCounts>;
  /** Stops the catch-up (after a failure elsewhere); never throws. */
  close(): Promise<void>;
}

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
 * A listing page held in memory: the ids of identities with no control, packed, and the others
 * (one in twenty) as one JSON text of tuples, a sixth of their size as objects.
 */
interface HeldPage {
  readonly ids: PackedIds;
  /** Ids without a control whose legacy fields are not both false, by `legacyCode`. */
  readonly marked: Map<number, PackedIds>;
  readonly holders: string;
  readonly bytes: number;
}

const holdsSellOnly = (controls: readonly { readonly type: string }[]) =>
  controls.some((c) => c.type === "SELL_ONLY");

/** The findings stage looks at a valid candidate (a flag true) and at a SELL_ONLY holder. */
const isCandidate = (s: SourceState | undefined) =>
  s?.valid === true && (s.userDisabled || s.adminDisabled);

function stateRow(
  identityId: string,
  source: SourceState | undefined,
  observed: Omit<StoredObservation, "identity_id">,
): IdentityStateRow {
  const valid = source?.valid === true ? source : null;
  return {
    identity_id: identityId,
    user_disabled: valid ? valid.userDisabled : null,
    admin_disabled: valid ? valid.adminDisabled : null,
    has_source: valid !== null,
    ...observed,
  };
}

const asObserved = (controls: readonly NewSnapshotControl[]) =>
  controls.map((c) => ({
    control_id: c.control_id,
    type: c.type,
    set_by: c.set_by,
    set_by_raw: c.set_by_raw,
    is_overridable: c.is_overridable,
  }));

/**
 * What is observed of the candidates no page listed, from what reading them by id answered (after
 * a bulk listing, "not found" without a read): the snapshot rows stored with their findings.
 */
function observeUnlisted(runId: string, reads: readonly ReadIdentity[]) {
  const observed: StoredObservation[] = [];
  const identities: NewSnapshotIdentity[] = [];
  const controls: NewSnapshotControl[] = [];
  let notFound = 0;
  for (const r of reads) {
    if (r.status === "found") {
      const row = snapshotIdentity(runId, r.identity);
      identities.push(row);
      controls.push(...r.identity.controls);
      observed.push({
        identity_id: r.identity.id,
        status: "found",
        error: null,
        platform_user_disabled: row.platform_user_disabled ?? null,
        platform_admin_disabled: row.platform_admin_disabled ?? null,
        controls: asObserved(r.identity.controls),
      });
      continue;
    }
    if (r.status === "not_found") notFound += 1;
    const row = { run_id: runId, identity_id: r.id, status: r.status, error: r.error };
    identities.push(row);
    observed.push({
      ...row,
      platform_user_disabled: null,
      platform_admin_disabled: null,
      controls: [],
    });
  }
  return { observed, snapshot: { identities, controls }, notFound };
}

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
  let lookupBase: Promise<number> | null = null;
  let lookupSeq = 0;

  const rethrow = () => {
    if (failure) throw failure.err;
  };

  /**
   * Looks up, by id, the source rows of SELL_ONLY holders the source pass did not keep, stores
   * them (negative `seq`, allocated here so that concurrent pages never share one) and tells the
   * index.
   */
  async function lookUpOutside(observed: readonly StoredObservation[]): Promise<void> {
    const outside = observed
      .filter(
        (o) =>
          (holdsSellOnly(o.controls) || platformMarks(o)) && index.get(o.identity_id) === undefined,
      )
      .map((o) => o.identity_id);
    if (outside.length === 0) return;
    lookupBase ??= maxLookupSeq(db, runId);
    const base = await lookupBase;
    const found = await lookupSourceRows(db, ctx.source, outside);
    const keep = [];
    for (const [id, rows] of found) {
      for (const row of rows) keep.push(sourceRecord(runId, base - ++lookupSeq, row));
      index.set(id, sourceStateOf(rows));
    }
    await insertSourceRows(db, keep);
  }

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
    const ids = new PackedIds();
    const marked = new Map<number, PackedIds>();
    const holders: ListedIdentity[] = [];
    for (const i of identities) {
      if (i.controls.length > 0) holders.push(i);
      else if (!legacySaid(i.legacy)) ids.push(i.id);
      else {
        const code = legacyCode(i.legacy);
        const bucket = marked.get(code) ?? new PackedIds();
        marked.set(code, bucket);
        bucket.push(i.id);
      }
    }
    const text = JSON.stringify(holders.map(packHolder));
    let bytes = 128 + ids.bytes + text.length;
    for (const bucket of marked.values()) bytes += bucket.bytes;
    held.push({ ids, marked, holders: text, bytes });
    heldBytes += bytes;
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
      const identities: ListedIdentity[] = [];
      for (const page of pages) {
        heldBytes -= page.bytes;
        for (const h of JSON.parse(page.holders) as PackedHolder[]) {
          identities.push(unpackHolder(h, runId));
        }
        for (const id of page.ids.toArray()) identities.push({ id, controls: NO_CONTROLS });
        for (const [code, bucket] of page.marked) {
          const legacy = legacyOfCode(code);
          for (const id of bucket.toArray()) identities.push({ id, controls: NO_CONTROLS, legacy });
        }
      }
      const classified = await classifyPage(identities);
      counts.asListed += classified;
      counts.held += classified;
    }
  }

  /** Before the source rows are stored, past `memoryBytes`: holders with their controls, the rest put aside. */
  async function stagePage(identities: readonly ListedIdentity[]): Promise<void> {
    const held: NewSnapshotIdentity[] = [];
    const aside: { run_id: string; identity_id: string }[] = [];
    const controls: NewSnapshotControl[] = [];
    for (const i of identities) {
      if (i.controls.length > 0 || legacyTrue(i.legacy)) {
        held.push(snapshotIdentity(runId, i));
        controls.push(...i.controls);
      } else aside.push({ run_id: runId, identity_id: i.id });
    }
    const stage = stageWrite(aside);
    const writes = snapshotWrites(held, controls);
    if (stage) writes.push(stage);
    await chainWrites(writes)?.execute(db);
  }

  /** After: the page and the source index say everything; one transaction stores both. */
  async function classifyPage(page: readonly ListedIdentity[]): Promise<number> {
    // Claimed before any await: pages classified side by side never both take an identity.
    const identities = once.claim(page);
    const stored: NewSnapshotIdentity[] = [];
    const controls: NewSnapshotControl[] = [];
    const observed: StoredObservation[] = [];
    for (const i of identities) {
      const source = index.get(i.id);
      // A listed identity with no control that the source does not hold matters to no finding,
      // unless the platform's legacy fields mark it (its source row is looked up).
      if (i.controls.length === 0 && source === undefined && !legacyTrue(i.legacy)) continue;
      const row = snapshotIdentity(runId, i);
      stored.push(row);
      controls.push(...i.controls);
      observed.push({
        identity_id: i.id,
        status: "found",
        error: null,
        platform_user_disabled: row.platform_user_disabled ?? null,
        platform_admin_disabled: row.platform_admin_disabled ?? null,
        controls: asObserved(i.controls),
      });
    }
    return classify(observed, { identities: stored, controls });
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
      const write = stagePage(identities);
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
