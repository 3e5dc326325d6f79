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
 * - a pending create whose identity's legacy `user_disabled` on the platform is now true, without
 *   the control, waits for the platform's own migration: `skipped:awaiting_platform_migration`
 *   (unless `--no-wait-for-platform`; `--wait-for-platform-s` as in the plan's findings). The
 *   legacy fields come with a listing's items; an identity with a pending create that a filtered
 *   listing does not show, or that per-identity reads, is read by id (`GET
 *   /v2/identity/identities/{id}` carries its controls and its legacy fields in one answer);
 * - the rest stay pending, marked as read now.
 */
import {
  countPendingByAction,
  countStalePending,
  serverTimeAgo,
  touchActions,
} from "../../db/journal/journal-queries.ts";
import {
  type StaleAction,
  stalePendingWithFlags,
  touchStalePending,
} from "../../db/journal/reverify-queries.ts";
import { type IdentityControl, PATHS, PlatformError } from "../../platform/index.ts";
import { listPartitioned } from "../read/partitioned-listing.ts";
import { type ChosenStrategy, chooseStrategy } from "../read/state-strategy.ts";
import type { ReverifyContext } from "./reverify-context.ts";
import { platformEstimate, sourceRowsOfChain } from "./reverify-estimate.ts";
import { newTally, notFound, type ReverifyTally, readFailed, settle } from "./reverify-settle.ts";
import { recheckSource, type SourceRecheck } from "./source-recheck.ts";

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
  // Decided by an earlier process, whatever path brought them back to pending since (an in-doubt
  // create verified absent in this process is not stale for the platform, but its source flag is).
  const decided = await countStalePending(ctx.db, runId, since, "created_at");
  if (stale.actions + decided.actions === 0) {
    return { strategy: null, reread: 0, source: null, ...newTally() };
  }
  const { creates } = await countPendingByAction(ctx.db, runId);
  // Only creates rest on a source flag: deletes (prune) are re-checked right before each send.
  const source =
    ctx.options?.source && creates > 0 && decided.actions > 0
      ? await recheckSource(
          ctx,
          ctx.options.source,
          runId,
          since,
          decided.identities,
          await sourceRowsOfChain(ctx.db, runId),
        )
      : null;
  const reread = Math.max(stale.actions, source?.sourceChanged ?? 0);
  if (source && source.sourceChanged > 0) stale = await countStalePending(ctx.db, runId, since);
  if (stale.actions === 0) return { strategy: null, reread, source, ...newTally() };
  const writes = creates - (source?.sourceChanged ?? 0);
  const legacy = readsLegacy(ctx);
  const choice = chooseStrategy("auto", {
    ...(await platformEstimate(ctx.db, runId)),
    candidates: stale.identities,
    writes,
    rate: rateOf(ctx),
    prune: false,
    // Waiting for the platform, each identity with a pending create (it lacks its control, so a
    // filtered listing will not show it) is read by id for its legacy fields.
    readsById: legacy,
    lackingKnown: legacy ? Math.min(stale.identities, writes) : undefined,
  });
  ctx.logger.info(
    `Re-reading ${stale.actions} pending actions of ${stale.identities} identities decided on an earlier read, with the ${choice.strategy} strategy: ${choice.short}.`,
  );
  ctx.logger.debug(`Re-read strategy: ${choice.reason}`);
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
    tally.awaitingPlatform
      ? `${tally.awaitingPlatform} creates left to the platform's own migration (its legacy user_disabled is now true; not sent)`
      : "",
  ].filter(Boolean);
  ctx.logger.info(
    `Re-read ${stale.actions} pending actions: ${changed.length ? changed.join(", ") : "all still to do"}.`,
  );
  return { strategy: choice.strategy, reread, source, ...tally };
}

/** Whether the platform's legacy fields are re-read: only when a create would wait for them. */
const readsLegacy = (ctx: ReverifyContext) =>
  ctx.waitForPlatform !== undefined && ctx.waitForPlatform.kind !== "no-wait";

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
      const listed = new Map(page.map((i) => [i.id, i]));
      const ids = [...listed.keys()];
      for (let after = 0; ; ) {
        const actions = await stalePendingWithFlags(ctx.db, runId, since, after, PAGE, ids);
        if (actions.length === 0) break;
        after = actions[actions.length - 1]?.id ?? after;
        const fresh: number[] = [];
        for (const a of actions) {
          const i = listed.get(a.identity_id);
          const legacy = i && readsLegacy(ctx) ? legacyOf(i) : null;
          if (!(await settle(ctx, a, i?.activeControls ?? [], tally, legacy))) fresh.push(a.id);
        }
        await touchActions(ctx.db, fresh);
      }
    },
  });
  // Unlisted by filtered: no SELL_ONLY. Its creates are read by id when their legacy fields count.
  const byId = kind === "filtered" && readsLegacy(ctx);
  if (kind === "filtered" && !byId) await touchStalePending(ctx.db, runId, since, "create");
  for (let after = 0; ; ) {
    const page = await stalePendingWithFlags(ctx.db, runId, since, after, PAGE);
    if (page.length === 0) return;
    after = page[page.length - 1]?.id ?? after;
    // Absent from a bulk listing is not proof of absence (issue 50): read by id first.
    if (kind === "bulk" || byId) {
      await settleByIdentity(ctx, page, tally, () => true);
    } else for (const a of page) await settle(ctx, a, [], tally);
  }
}

const legacyOf = (i: { userDisabled: boolean | null; adminDisabled: boolean | null }) => ({
  userDisabled: i.userDisabled,
  adminDisabled: i.adminDisabled,
});

/**
 * One read of each identity with a pending action: of its controls, on the controls path, or, for
 * an identity with a pending create whose legacy fields count, of the identity by id (its
 * controls and legacy fields in one answer).
 */
async function settleByReads(
  ctx: ReverifyContext,
  runId: string,
  since: Date,
  tally: ReverifyTally,
): Promise<void> {
  const legacy = readsLegacy(ctx);
  for (let after = 0; ; ) {
    const page = await stalePendingWithFlags(ctx.db, runId, since, after, PAGE);
    if (page.length === 0) return;
    after = page[page.length - 1]?.id ?? after;
    await settleByIdentity(ctx, page, tally, (actions) =>
      legacy ? actions.some((a) => a.action === "create") : false,
    );
  }
}

/** Reads each identity of `page` once (by id where `byId` says so) and settles its actions. */
async function settleByIdentity(
  ctx: ReverifyContext,
  page: readonly StaleAction[],
  tally: ReverifyTally,
  byId: (actions: readonly StaleAction[]) => boolean,
): Promise<void> {
  const byIdentity = new Map<string, StaleAction[]>();
  for (const a of page)
    byIdentity.set(a.identity_id, [...(byIdentity.get(a.identity_id) ?? []), a]);
  const fresh: number[] = [];
  await Promise.all(
    [...byIdentity].map(async ([identityId, actions]) => {
      let controls: readonly IdentityControl[];
      let legacy: ReturnType<typeof legacyOf> | null = null;
      try {
        if (byId(actions)) {
          const identity = await ctx.client.getIdentity(identityId, { signal: ctx.signal });
          controls = identity.activeControls;
          legacy = legacyOf(identity);
        } else {
          controls = await ctx.client.listIdentityControls(identityId, { signal: ctx.signal });
        }
      } catch (err) {
        if (!(err instanceof PlatformError) || err.kind === "cancelled") throw err;
        for (const a of actions) {
          if (err.kind === "not_found") await notFound(ctx, a, err.detail, tally);
          else await readFailed(ctx, a, err, tally);
        }
        return;
      }
      for (const a of actions) {
        if (!(await settle(ctx, a, controls, tally, legacy))) fresh.push(a.id);
      }
    }),
  );
  await touchActions(ctx.db, fresh);
}
