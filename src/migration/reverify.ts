/**
 * Never create on stale knowledge. A pending action decided on an earlier read of the platform (a
 * resumed run, an approved plan) may be out of date: someone may have added the control since,
 * through the platform's own UI. Before any of them is sent, the state of every such action is
 * read again, the cheapest way the one cost model of `state-strategy.ts` finds:
 *
 * - a listing of every identity (bulk) or of those holding a SELL_ONLY (filtered), on the
 *   identities path, read in created_at windows side by side like the plan's own listing;
 * - one read of the controls of each identity, on the path the creates share, only when that is
 *   really fewer requests.
 *
 * First, the source's flags of the pending creates are read again (`source-recheck.ts`): a create
 * whose `user_disabled` was cleared becomes `skipped:source_changed`, flags newly set are reported
 * and left for the next run.
 *
 * Then, per action:
 * - a pending create whose identity now holds the control the mapping expects (CLIENT, SELL_ONLY,
 *   overridable) becomes `succeeded:adopted`; any other control found is judged by the diff rules;
 * - a pending create the diff rules no longer call for on the fresh controls (a SELL_ONLY of an
 *   unknown owner appeared) becomes `skipped:no_longer_missing`;
 * - a pending delete whose control is gone becomes `succeeded:already_deleted`;
 * - an identity the platform no longer knows fails its action (`identity_not_found`): a 404 or
 *   absent from a complete bulk listing (a filtered listing cannot tell; the create's 404 will);
 * - an identity whose state cannot be read fails its action (`read_failed`): it is not sent blind;
 * - the rest stay pending, marked as read now.
 */
import type { Kysely } from "kysely";
import {
  countPendingByAction,
  countStalePending,
  serverTimeAgo,
  touchActions,
} from "../db/journal-queries.ts";
import { stalePendingWithFlags, touchStalePending } from "../db/reverify-queries.ts";
import { getRun } from "../db/run-queries.ts";
import type { Database } from "../db/schema.ts";
import { previousListings } from "../db/snapshot-queries.ts";
import { type IdentityControl, PATHS, PlatformError } from "../platform/index.ts";
import { listPartitioned } from "./partitioned-listing.ts";
import type { ReverifyContext } from "./reverify-context.ts";
import { newTally, notFound, type ReverifyTally, readFailed, settle } from "./reverify-settle.ts";
import { recheckSource, type SourceRecheck } from "./source-recheck.ts";
import { type ChosenStrategy, chooseStrategy, type StrategyInputs } from "./state-strategy.ts";

export type { ReverifyContext };

export interface ReverifyOptions {
  /**
   * Re-read the pending actions last read before this instant (the server's clock). Default: when
   * this process started. `apply --plan` passes the moment its confirmation was given.
   */
  readonly before?: Date;
}

/** How the re-read pending actions ended. */
export interface ReverifyResult extends ReverifyTally {
  readonly strategy: ChosenStrategy | null;
  readonly reread: number;
  /** The source's re-read (null: nothing pending, or no source given). */
  readonly source: SourceRecheck | null;
}

const PAGE = 500;
const NOT_LISTED = "absent from a complete listing of the platform's identities";

/**
 * Re-reads the platform state of every pending action of `runId` last read before
 * `options.before` (default: this process's start), and settles those the platform already
 * settled. Call it before sending anything; a run whose actions were all decided in this process
 * costs one query.
 *
 * @example
 *   const r = await reverifyPending(ctx);
 *   // r.adopted: creates that someone else made meanwhile, now adopted instead of duplicated
 */
export async function reverifyPending(
  ctx: ReverifyContext,
  runId = ctx.runId,
  options: ReverifyOptions = {},
): Promise<ReverifyResult> {
  const since = options.before ?? (await serverTimeAgo(ctx.db, process.uptime()));
  let stale = await countStalePending(ctx.db, runId, since);
  if (stale.actions === 0) return { strategy: null, reread: 0, source: null, ...newTally() };
  const { creates } = await countPendingByAction(ctx.db, runId);
  // Only creates rest on a source flag: deletes (prune) are re-checked right before each send.
  const source =
    ctx.options?.source && creates > 0
      ? await recheckSource(
          ctx,
          ctx.options.source,
          runId,
          since,
          stale.identities,
          await sourceRowsOfChain(ctx.db, runId),
        )
      : null;
  const reread = stale.actions;
  if (source && source.sourceChanged > 0) stale = await countStalePending(ctx.db, runId, since);
  if (stale.actions === 0) return { strategy: null, reread, source, ...newTally() };
  const choice = chooseStrategy("auto", {
    ...(await platformEstimate(ctx.db, runId)),
    candidates: stale.identities,
    writes: creates - (source?.sourceChanged ?? 0),
    rate: rateOf(ctx),
    prune: false,
    // Settling pending actions reads no legacy field: no strategy reads by id here.
    readsById: false,
  });
  ctx.logger.info(
    `Re-reading ${stale.actions} pending actions of ${stale.identities} identities decided on an earlier read, with the ${choice.strategy} strategy (${choice.reason}).`,
  );
  const tally = newTally();
  if (choice.strategy === "per-identity") await settleByReads(ctx, runId, since, tally);
  else await settleByListing(ctx, runId, since, choice.strategy, tally);
  const changed = [
    tally.adopted ? `${tally.adopted} creates adopted (a matching control appeared meanwhile)` : "",
    tally.noLongerMissing
      ? `${tally.noLongerMissing} creates no longer called for (not sent; see the report)`
      : "",
    tally.alreadyDeleted ? `${tally.alreadyDeleted} deletes already done` : "",
    tally.notFound ? `${tally.notFound} identities no longer on the platform` : "",
    tally.readFailed ? `${tally.readFailed} could not be read (not sent; a re-run retries)` : "",
  ].filter(Boolean);
  ctx.logger.info(
    `Re-read ${stale.actions} pending actions: ${changed.length ? changed.join(", ") : "all still to do"}.`,
  );
  return { strategy: choice.strategy, reread, source, ...tally };
}

const rateOf = (ctx: ReverifyContext) =>
  ctx.client.metrics().budgets[PATHS.identities]?.rate ?? ctx.listing?.rate ?? 40;

/**
 * One pass over a listing (every identity, or those holding a SELL_ONLY); the pending actions of
 * each page are settled from it. What the complete listing never showed: under bulk, not on the
 * platform; under filtered, holding no active SELL_ONLY (a create stays to do, a delete's target
 * is gone).
 */
async function settleByListing(
  ctx: ReverifyContext,
  runId: string,
  since: Date,
  kind: "bulk" | "filtered",
  tally: ReverifyTally,
): Promise<void> {
  const latencyKey = `GET ${PATHS.identities}`;
  await listPartitioned({
    list: (opts) => ctx.client.listIdentities(opts),
    controlTypes: kind === "filtered" ? ["SELL_ONLY"] : undefined,
    maxParallel:
      ctx.listing?.maxParallel ?? Math.max(1, Math.min(8, ctx.options?.platform.concurrency ?? 8)),
    rate: () => rateOf(ctx),
    latencyMs: () => ctx.client.metrics().endpoints[latencyKey]?.latencyMs.p50 ?? null,
    retryBaseMs: ctx.listing?.retryBaseMs,
    pageSize: ctx.listing?.pageSize,
    logger: ctx.logger,
    signal: ctx.signal,
    onPage: async (page) => {
      const controls = new Map(page.map((i) => [i.id, i.activeControls]));
      const ids = [...controls.keys()];
      for (let after = 0; ; ) {
        const actions = await stalePendingWithFlags(ctx.db, runId, since, after, PAGE, ids);
        if (actions.length === 0) break;
        after = actions[actions.length - 1]?.id ?? after;
        const fresh: number[] = [];
        for (const a of actions) {
          if (!(await settle(ctx, a, controls.get(a.identity_id) ?? [], tally))) fresh.push(a.id);
        }
        await touchActions(ctx.db, fresh);
      }
    },
  });
  if (kind === "filtered") await touchStalePending(ctx.db, runId, since, "create");
  for (let after = 0; ; ) {
    const page = await stalePendingWithFlags(ctx.db, runId, since, after, PAGE);
    if (page.length === 0) return;
    after = page[page.length - 1]?.id ?? after;
    for (const a of page) {
      if (kind === "bulk") await notFound(ctx, a, NOT_LISTED, tally);
      else await settle(ctx, a, [], tally);
    }
  }
}

/** One read of the controls of each identity with a pending action, on the controls path. */
async function settleByReads(
  ctx: ReverifyContext,
  runId: string,
  since: Date,
  tally: ReverifyTally,
): Promise<void> {
  let after = 0;
  for (;;) {
    const page = await stalePendingWithFlags(ctx.db, runId, since, after, PAGE);
    if (page.length === 0) return;
    after = page[page.length - 1]?.id ?? after;
    const byIdentity = new Map<string, typeof page>();
    for (const a of page)
      byIdentity.set(a.identity_id, [...(byIdentity.get(a.identity_id) ?? []), a]);
    const fresh: number[] = [];
    await Promise.all(
      [...byIdentity].map(async ([identityId, actions]) => {
        let controls: IdentityControl[];
        try {
          controls = await ctx.client.listIdentityControls(identityId, { signal: ctx.signal });
        } catch (err) {
          if (!(err instanceof PlatformError) || err.kind === "cancelled") throw err;
          for (const a of actions) {
            if (err.kind === "not_found") await notFound(ctx, a, err.detail, tally);
            else await readFailed(ctx, a, err, tally);
          }
          return;
        }
        for (const a of actions) if (!(await settle(ctx, a, controls, tally))) fresh.push(a.id);
      }),
    );
    await touchActions(ctx.db, fresh);
  }
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/**
 * What the cost model needs to know of the platform: its identities (the latest bulk listing's
 * count, else the largest source row count of the run and the runs it came from: an `apply --plan`
 * run copies only its plan's candidates) and how many hold a SELL_ONLY (the latest listing's).
 */
async function platformEstimate(
  db: Kysely<Database>,
  runId: string,
): Promise<Omit<StrategyInputs, "candidates" | "writes" | "rate" | "prune">> {
  const previous = await previousListings(db);
  const lastBulk = previous.find((p) => p.listing.filter === "none");
  const lastAny = previous[0];
  const sellOnly = num(lastAny?.listing.sell_only_identities);
  const listed = num(lastBulk?.listing.identities);
  return {
    platformIdentities: listed ?? (await sourceRowsOfChain(db, runId)),
    platformIdentitiesFrom:
      listed !== null ? `the listing of run ${lastBulk?.runId}` : "the source's row count",
    sellOnlyIdentities: sellOnly,
    sellOnlyFrom: sellOnly !== null ? `the listing of run ${lastAny?.runId}` : "",
  };
}

async function sourceRowsOfChain(db: Kysely<Database>, runId: string): Promise<number> {
  let most = 0;
  let id: string | null = runId;
  for (let depth = 0; id !== null && depth < 10; depth++) {
    const run = await getRun(db, id);
    const counts = (run?.counts ?? {}) as Record<string, number>;
    most = Math.max(most, Number(run?.source_rows_read ?? counts.source_rows_read ?? 0));
    id = run?.parent_run_id ?? null;
  }
  return most;
}
