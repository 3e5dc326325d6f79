/**
 * The source pass and the platform's state, read the way `--state` asks (or `auto` chooses):
 * a listing (bulk or filtered) side by side with the source pass, or per-identity reads after it.
 */
import { previousListings } from "../../db/journal/snapshot-queries.ts";
import { countSource } from "../../db/source/source-reader.ts";
import { UserError } from "../../errors.ts";
import { PATHS, type PlatformClient } from "../../platform/index.ts";
import { computeFindings, type FindingsOptions } from "../classify/findings.ts";
import { startFindingsStream } from "../classify/findings-stream.ts";
import type { FindingsStream, FindingsStreamCounts } from "../classify/findings-stream-types.ts";
import { forgetSightingsOfClearedFlags, type WaitPolicy } from "../execute/platform-wait.ts";
import { createProgress } from "../steer/progress.ts";
import { endpointBudget } from "../steer/progress-rate.ts";
import { noteStage } from "../steer/run-stage.ts";
import { BareListed } from "./bare-listed.ts";
import { readIdentities, readLegacyWhereNeeded } from "./identity-reads.ts";
import type { ListedIdentity } from "./listed-identity.ts";
import type { SinceLastSummary } from "./since-last-choice.ts";
import {
  type ListingFigures,
  type ListingHint,
  listPlatform,
  perIdentitySnapshot,
  type SnapshotContext,
} from "./snapshot.ts";
import type { SourceIndex } from "./source-index.ts";
import { loadSource, type SourceCounts } from "./source-stage.ts";
import {
  type ChosenStrategy,
  chooseStrategy,
  densityEstimate,
  LISTING_PAGE,
  PER_IDENTITY_BLIND_TO_PRUNE,
  type StateStrategy,
} from "./state-strategy.ts";

/** summary.json's `platform_state`: how the state was read, and why that way. */
export interface PlatformStateSummary {
  readonly strategy: ChosenStrategy;
  readonly reason: string;
  /** How a candidate's existence on the platform is established. */
  readonly existence: string;
  readonly listing: ListingFigures | null;
  /** `--since-last`: whether the run read incrementally or whole, and why (issue 55). */
  readonly since_last?: SinceLastSummary;
}

export interface StateStageOptions {
  readonly requested: StateStrategy;
  /**
   * The run may create controls (apply, reconcile): creates share the controls path, and the
   * missing client controls are journaled as pending creates.
   */
  readonly writes: boolean;
  /** --prune: prunable client controls are journaled as pending deletes. */
  readonly prune: boolean;
  /** --wait-for-platform / --wait-for-platform-s (default: wait). */
  readonly waitForPlatform?: WaitPolicy;
}

export const EXISTENCE: Record<ChosenStrategy, string> = {
  bulk: "read by id when unlisted: a candidate absent from the complete listing of every identity is read by id (GET /v2/identity/identities/{id}); one the platform answers 404 for is identity_not_found, one it finds was omitted by the listing (platform_state.listing.omitted) and is classified from that read",
  filtered:
    "read per unlisted candidate: a candidate absent from the SELL_ONLY listing is read by id (GET /v2/identity/identities/{id}, which also brings its legacy fields); one the platform answers 404 for is identity_not_found, as is one whose create answers 404 (gone since)",
  "per-identity":
    "read per candidate: an identity the platform answers 404 for is identity_not_found",
};

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/**
 * Reads the source and the platform's state into the run's tables, computes the findings (and,
 * for writers, journals the actions) and says how it did. A listing's findings are computed as
 * its pages arrive (`findings-stream.ts`); per-identity reads are joined once they are done.
 * `--state per-identity` with `--prune` is refused before any request: per-identity never sees
 * what prune must delete.
 *
 * @example
 *   const { source, state } = await readPlatformState(ctx, { requested: "auto", writes: false, prune: false });
 *   logger.info(state.reason);
 */
export async function readPlatformState(
  ctx: SnapshotContext,
  opts: StateStageOptions,
): Promise<{ source: SourceCounts; state: PlatformStateSummary }> {
  const { db, logger } = ctx;
  if (opts.requested === "per-identity" && opts.prune) {
    throw new UserError(
      `--state per-identity cannot be combined with --prune: ${PER_IDENTITY_BLIND_TO_PRUNE}. Use --state filtered, bulk or auto.`,
    );
  }
  // Counting first checks the relation and columns before any request, and sizes `auto`.
  await noteStage(db, ctx.runId, "reading the source");
  const known = await countSource(db, ctx.source);
  const previous = await previousListings(db, ctx.runId);
  const lastBulk = previous.find((p) => p.listing.filter === "none");
  const lastAny = previous[0];
  const bulkCount = num(lastBulk?.listing.identities);
  const platformIdentities = bulkCount ?? known.total;
  let sellOnly = num(lastAny?.listing.sell_only_identities);
  let sellOnlyFrom = lastAny ? `the listing of run ${lastAny.runId}` : "";
  if (opts.requested === "auto" && sellOnly === null && platformIdentities > LISTING_PAGE) {
    const probe = await probeSellOnly(ctx.client, platformIdentities, ctx.signal);
    if (probe) [sellOnly, sellOnlyFrom] = [probe.count, probe.from];
  }
  const choice = chooseStrategy(opts.requested, {
    platformIdentities,
    platformIdentitiesFrom: lastBulk
      ? `the listing of run ${lastBulk.runId}`
      : "the source's row count",
    sellOnlyIdentities: sellOnly,
    sellOnlyFrom,
    candidates: known.anyFlag,
    writes: opts.writes ? known.userDisabled : 0,
    rate: ctx.listing.rate,
    prune: opts.prune,
  });
  logger.info(`Reading platform state with the ${choice.strategy} strategy: ${choice.short}`);
  logger.debug(`Platform state strategy: ${choice.reason}`);

  const strategy = choice.strategy;
  const journal = {
    journalCreates: opts.writes,
    journalDeletes: opts.prune,
    waitForPlatform: opts.waitForPlatform,
  };
  let source: SourceCounts;
  let listing: ListingFigures | null = null;
  if (strategy === "per-identity") {
    await noteStage(db, ctx.runId, "reading the source");
    source = await loadSource(db, ctx.source, ctx.runId, ctx.progress, ctx.signal);
    await noteStage(db, ctx.runId, "reading the platform");
    await perIdentitySnapshot(ctx);
    await readLegacyWhereNeeded(ctx);
    await noteStage(db, ctx.runId, "classifying");
    await computeFindings(db, ctx.runId, journal);
  } else {
    // Side by side; each listing page is classified as it arrives.
    await noteStage(db, ctx.runId, "reading the source and the platform");
    const sameKind = previous.find(
      (p) => p.listing.filter === (strategy === "bulk" ? "none" : "SELL_ONLY"),
    );
    const hint: ListingHint = {
      expectedItems: num(sameKind?.listing.identities),
      latencyMs: num(lastAny?.listing.latency_p50_ms),
    };
    [source, listing] = await listWithFindings(ctx, strategy, hint, journal, known.anyFlag);
  }
  // The source pass is complete: a flag it found not true cannot await the platform.
  await forgetSightingsOfClearedFlags(db, ctx.runId);
  return {
    source,
    state: { strategy, reason: choice.reason, existence: EXISTENCE[strategy], listing },
  };
}

/**
 * What lists the platform into the findings stream in place of the whole listing (`--since-last`):
 * `sourceDone` settles once the source rows are stored.
 */
export type PlatformLister = (
  onPage: (page: ListedIdentity[]) => Promise<void>,
  sourceDone: Promise<void>,
) => Promise<ListingFigures>;

/**
 * The listing waits on the rate budget and the source pass on the database, so they overlap;
 * findings are computed as both pass identities (see `findings-stream.ts`), leaving only the
 * candidates no page listed for after the last page. `lister` lists in place of `listPlatform`.
 */
export async function listWithFindings(
  ctx: SnapshotContext,
  strategy: "bulk" | "filtered",
  hint: ListingHint,
  journal: Omit<FindingsOptions, "unlistedHoldNoSellOnly">,
  flagged: number,
  lister?: PlatformLister,
): Promise<[SourceCounts, ListingFigures]> {
  const { db, logger } = ctx;
  const quiet = createProgress({ enabled: false, logger });
  // The kept rows are the flagged ones and the few anomalies: they size the index and what the
  // stream holds in memory.
  const expectedIds = Math.ceil(flagged * 1.05) + 1000;
  const stream = startFindingsStream(ctx, { ...journal, expectedIds, ...ctx.findingsMemory });
  // What a complete listing shows bare, for a later --since-last (0019).
  const bare = lister || strategy !== "bulk" ? null : new BareListed(db, ctx.runId);
  const source = deferred();
  source.promise.catch(() => {}); // the source pass's own failure is the one reported
  try {
    const read = await Promise.all([
      loadSource(db, ctx.source, ctx.runId, quiet, ctx.signal, stream.index).then(
        async (counts) => {
          const moved = await stream.sourceComplete();
          source.resolve();
          logger.debug(
            `source: ${counts.rowsRead} rows read; ${moved} identities listed so far are in the source; findings follow the listing from here`,
          );
          return counts;
        },
        (err: unknown) => {
          source.reject(err);
          throw err;
        },
      ),
      lister
        ? lister((page) => stream.page(page), source.promise)
        : listPlatform(ctx, strategy, hint, (page) => stream.page(bare?.note(page) ?? page)),
    ]);
    const counts = await finishUnlisted(ctx, stream, strategy);
    await bare?.flush();
    logFindings(ctx, counts, stream.index);
    if (counts.repeats > 0) {
      logger.warn(
        `platform anomaly: the listing served ${counts.repeats} copies of identities it had already served; each identity was stored and classified once`,
      );
    }
    if (counts.omitted > 0) {
      logger.warn(
        `platform anomaly: the listing omitted ${counts.omitted} candidate ${counts.omitted === 1 ? "identity" : "identities"} that a read by id found; classified from that read`,
      );
    }
    const figures = { ...read[1], repeated_identities: counts.repeats, omitted: counts.omitted };
    return [read[0], figures];
  } finally {
    await stream.close();
  }
}

/** A promise settled from outside (`Promise.withResolvers` is past the compiler's library). */
function deferred() {
  const d = { resolve: () => {}, reject: (_err: unknown) => {} };
  const promise = new Promise<void>((yes, no) => Object.assign(d, { resolve: yes, reject: no }));
  return { promise, ...d };
}

/**
 * After a listing: the candidates it did not show are read by id, with progress. Under bulk, an
 * absence is confirmed so (issue 50): a listing that omits an identity does not make it gone.
 */
async function finishUnlisted(
  ctx: SnapshotContext,
  stream: FindingsStream,
  strategy: "bulk" | "filtered",
): Promise<FindingsStreamCounts> {
  ctx.progress.start("platform unlisted candidates", null, {
    rateCap: endpointBudget(ctx.client, PATHS.identity),
  });
  try {
    return await stream.finish(strategy, (ids) => readIdentities(ctx, ids));
  } finally {
    ctx.progress.stop();
  }
}

function logFindings(ctx: SnapshotContext, c: FindingsStreamCounts, index: SourceIndex): void {
  const past = index.complete
    ? ""
    : ` (its bound: ${index.refused} source rows past it were read from the database)`;
  ctx.logger.debug(
    `findings: ${c.asListed} identities classified as listed (${c.held} of them held in memory until the source pass was complete), ${c.caughtUp} stored meanwhile and caught up, ${c.unlisted} unlisted candidates after the listing; ${c.actions} actions journaled; the source index holds ${index.size} ids in ${(index.tableBytes / 1048576).toFixed(1)} MB${past}`,
  );
}

/**
 * How many identities hold a SELL_ONLY, from a first page of the SELL_ONLY listing (exact when it
 * is the only page) or, failing that, from its density against a first page of every identity.
 * Costs one or two listing requests.
 */
async function probeSellOnly(
  client: PlatformClient,
  platformIdentities: number,
  signal?: AbortSignal,
): Promise<{ count: number; from: string } | null> {
  const first = async (controlTypes?: string[]) => {
    const gen = client.listIdentities({ limit: LISTING_PAGE, order: "ASC", controlTypes, signal });
    try {
      const r = await gen.next();
      const items = r.done ? [] : r.value;
      const times = items.map((i) => Date.parse(i.createdAt ?? "")).filter(Number.isFinite);
      const spanMs = times.length > 1 ? Math.max(...times) - Math.min(...times) : 0;
      return { items: items.length, spanMs, complete: items.length < LISTING_PAGE };
    } finally {
      await gen.return(undefined);
    }
  };
  const filtered = await first(["SELL_ONLY"]);
  if (filtered.complete) {
    return { count: filtered.items, from: "a first page of the SELL_ONLY listing, its only one" };
  }
  const all = await first();
  const estimate = densityEstimate(filtered, all, platformIdentities);
  return estimate === null
    ? null
    : {
        count: Math.max(estimate, filtered.items),
        from: "the density of a first page of the SELL_ONLY listing against one of every identity",
      };
}
