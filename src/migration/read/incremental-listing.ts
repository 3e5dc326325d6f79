/**
 * The incremental read of `--since-last` (issue 55), handed to the findings stream in place of
 * the whole listing (`listWithFindings`' lister): the identities the platform lists with
 * `updated_at` at or after the bound, then, once the source rows are stored, by id the
 * identities that must be read whatever their `updated_at` (`rereadIds`), and last every other
 * identity the previous whole view held, carried as it held it. Candidates to read again are
 * left out of every page: the stream reads them by id as the candidates no page listed.
 */
import type { Kysely } from "kysely";
import {
  candidatesAmong,
  type HeldIdentity,
  heldPage,
  type RereadReason,
  rereadIds,
} from "../../db/journal/incremental-queries.ts";
import type { Database, NewSnapshotControl } from "../../db/schema.ts";
import { stillBare } from "./bare-listed.ts";
import { readIdentities } from "./identity-reads.ts";
import { type ListedIdentity, listedIdentityOf, NO_CONTROLS } from "./listed-identity.ts";
import type { ListingFigures, SnapshotContext } from "./snapshot.ts";
import type { PlatformLister } from "./state-stage.ts";
import { LISTING_PAGE } from "./state-strategy.ts";
import { LEGACY_FALSE, legacyOf } from "./three-way-listing.ts";

/** What an incremental read did, for its summary and the marks on its snapshot. */
export interface IncrementalCounts {
  /** Identities the platform listed as changed since the bound. */
  listed: number;
  /** Listing pages asked for. */
  pages: number;
  /** Identities read again whatever their updated_at: every one, and those read here by id. */
  reread: string[];
  readHere: string[];
  /** Identities listed or read again: every other one the previous view held is carried. */
  excluded: string[];
  /** Identities carried from the previous whole view. */
  carried: number;
  /**
   * Candidates whose source row changed that the last complete read listed bare (no control,
   * legacy fields false) and nothing observed or wrote to since: carried bare, not read.
   */
  bare: string[];
  /** Identities read again by id (here or by the stream), by their first reason. */
  because: Record<RereadReason, number>;
}

const READ_BATCH = 500;

/**
 * The lister of an incremental run reading what changed since `sinceAt` and carrying the rest
 * from run `basis.viewId` (and, for candidates whose source row changed, from the bare identities
 * of the complete run `basis.completeId`); `counts` is filled as it goes.
 *
 * @example
 *   const counts = emptyCounts();
 *   const lister = incrementalLister(ctx, since, { viewId, completeId }, counts);
 *   await listWithFindings(ctx, "bulk", hint, journal, flagged, lister);
 */
export function incrementalLister(
  ctx: SnapshotContext,
  sinceAt: Date,
  basis: { readonly viewId: string; readonly completeId: string },
  counts: IncrementalCounts,
): PlatformLister {
  return async (onPage, sourceDone) => {
    const listed = await listChanged(ctx, sinceAt, counts, onPage);
    await sourceDone;
    const wanted = (await rereadIds(ctx.db, ctx.runId, basis.viewId)).filter(
      (r) => !listed.has(r.identity_id),
    );
    const changed = wanted.filter((r) => r.reason === "source_changed").map((r) => r.identity_id);
    const bare = await stillBare(ctx.db, ctx.runId, basis.completeId, changed);
    const rereads = wanted.filter((r) => !bare.has(r.identity_id));
    const again = rereads.map((r) => r.identity_id);
    const candidates = await candidatesAmong(ctx.db, ctx.runId, again);
    const others = again.filter((id) => !candidates.has(id));
    const unread = await readOthers(ctx, others, counts, onPage);
    counts.reread = again.filter((id) => !unread.has(id));
    for (const r of rereads) if (!unread.has(r.identity_id)) counts.because[r.reason] += 1;
    counts.bare = [...bare];
    for (let i = 0; i < counts.bare.length; i += LISTING_PAGE) {
      const ids = counts.bare.slice(i, i + LISTING_PAGE);
      await onPage(ids.map((id) => ({ id, controls: NO_CONTROLS, legacy: LEGACY_FALSE })));
    }
    counts.excluded = [...listed, ...counts.reread, ...counts.bare];
    const held = await carryHeld(ctx.db, ctx.runId, basis.viewId, counts.excluded, onPage);
    counts.carried = held + counts.bare.length;
    return figuresOf(counts);
  };
}

export const emptyCounts = (): IncrementalCounts => ({
  listed: 0,
  pages: 0,
  reread: [],
  readHere: [],
  excluded: [],
  carried: 0,
  bare: [],
  because: { source_changed: 0, needs_platform_state: 0, written: 0 },
});

/** The identities the platform lists as changed since `sinceAt`, each handed on once. */
async function listChanged(
  ctx: SnapshotContext,
  sinceAt: Date,
  counts: IncrementalCounts,
  onPage: (page: ListedIdentity[]) => Promise<void>,
): Promise<Set<string>> {
  const listed = new Set<string>();
  ctx.progress.start("platform changed since the last complete read", null);
  try {
    const pages = ctx.client.listIdentities({
      limit: ctx.listing.pageSize ?? LISTING_PAGE,
      order: "ASC",
      updatedAtGte: sinceAt.toISOString(),
      signal: ctx.signal,
    });
    for await (const page of pages) {
      counts.pages += 1;
      const fresh = page.filter((i) => !listed.has(i.id));
      for (const i of fresh) listed.add(i.id);
      await onPage(fresh.map((i) => listedIdentityOf(ctx.runId, i)));
      ctx.progress.tick(page.length);
    }
  } finally {
    ctx.progress.stop();
  }
  counts.listed = listed.size;
  return listed;
}

/**
 * Reads by id the identities to read again that are not candidates (the stream reads those),
 * handing on those found. Returns the ids whose read failed: they keep their held state.
 */
async function readOthers(
  ctx: SnapshotContext,
  ids: readonly string[],
  counts: IncrementalCounts,
  onPage: (page: ListedIdentity[]) => Promise<void>,
): Promise<Set<string>> {
  const failed = new Set<string>();
  for (let i = 0; i < ids.length; i += READ_BATCH) {
    const reads = await readIdentities(ctx, ids.slice(i, i + READ_BATCH));
    const found: ListedIdentity[] = [];
    for (const r of reads) {
      if (r.status === "found") {
        found.push(r.identity);
        counts.readHere.push(r.identity.id);
      } else if (r.status === "error") {
        failed.add(r.id);
        ctx.logger.warn(`--since-last: ${r.id}: ${r.error}; its last observed state is kept`);
      }
    }
    if (found.length > 0) await onPage(found);
  }
  return failed;
}

/** Hands on every identity run `viewId` held but `excluded`, as it held it. Returns how many. */
async function carryHeld(
  db: Kysely<Database>,
  runId: string,
  viewId: string,
  excluded: readonly string[],
  onPage: (page: ListedIdentity[]) => Promise<void>,
): Promise<number> {
  let after: string | null = null;
  let carried = 0;
  for (;;) {
    const page: HeldIdentity[] = await heldPage(db, viewId, excluded, after, LISTING_PAGE);
    if (page.length === 0) return carried;
    after = page[page.length - 1]?.identity_id ?? null;
    carried += page.length;
    await onPage(page.map((h) => heldAsListed(runId, h)));
  }
}

/** An identity as a previous run held it, as this run's listing would have shown it. */
function heldAsListed(runId: string, h: HeldIdentity): ListedIdentity {
  const legacy = legacyOf(h.platform_user_disabled, h.platform_admin_disabled);
  if (h.controls.length === 0) return { id: h.identity_id, controls: NO_CONTROLS, legacy };
  const controls = h.controls.map(
    (c): NewSnapshotControl => ({ ...c, run_id: runId, identity_id: h.identity_id }),
  );
  return { id: h.identity_id, controls, legacy };
}

/** summary.json's figures of an incremental read: never a listing a later `auto` sizes from. */
function figuresOf(c: IncrementalCounts): ListingFigures {
  return {
    filter: "updated_at",
    pages: c.pages,
    identities: c.listed,
    sell_only_identities: 0,
    created_at_min: null,
    created_at_max: null,
    latency_p50_ms: null,
    peak_parallel: 1,
    windows: 1,
    window_retries: 0,
    duplicates: 0,
  };
}
