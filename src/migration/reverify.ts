/**
 * Never create on stale knowledge. A pending action journaled before this process started (a
 * resumed run, an earlier plan) was decided on what the platform held back then; someone may have
 * added the control since, through the platform's own UI. Before any of them is sent, the state of
 * every such action is read again, at the cost of a listing when that is cheaper:
 *
 * - a pending create whose identity now holds a matching control becomes `succeeded:adopted`;
 * - a pending delete whose control is gone becomes `succeeded:already_deleted`;
 * - an identity the platform no longer knows fails its action (`identity_not_found`);
 * - an identity whose state cannot be read fails its action (`read_failed`): it is not sent blind;
 * - the rest stay pending, marked as read now.
 *
 * The strategy is chosen by {@link chooseReverifyStrategy}, a small pure function over the costs
 * that {@link reverifyStrategyCosts} lists; adding a strategy is a new entry there and an
 * implementation in `SETTLERS`.
 */
import type { Kysely } from "kysely";
import {
  countStalePending,
  serverTimeAgo,
  stalePendingPage,
  touchActions,
  updateAction,
} from "../db/journal-queries.ts";
import { getRun } from "../db/run-queries.ts";
import type { Action, Database } from "../db/schema.ts";
import type { Logger } from "../log.ts";
import {
  type IdentityControl,
  PATHS,
  type PlatformClient,
  PlatformError,
} from "../platform/index.ts";

export type ReverifyStrategy = "listing" | "per-identity";

/** What the choice is made from; every figure is known before any request. */
export interface ReverifyInput {
  /** Pending actions to re-read. */
  readonly actions: number;
  /** Distinct identities behind them. */
  readonly identities: number;
  /** Identities the platform holds, estimated (the run's source row count stands in for it). */
  readonly platformIdentities: number;
}

/** One way to re-read, and what it costs. */
export interface StrategyCost {
  readonly strategy: ReverifyStrategy;
  /** Requests it sends. */
  readonly requests: number;
  /** The path template it spends them on: its rate budget. */
  readonly path: string;
  /** True when that budget is the creates' own (GET, POST and DELETE of controls share it). */
  readonly sharesCreateBudget: boolean;
}

const LISTING_PAGE = 1000;

/**
 * The strategies and their costs: a listing of every platform identity (≈ N/1000 requests on the
 * identities path), or one read of the controls of each identity (on the path the creates use).
 *
 * @example
 *   reverifyStrategyCosts({ actions: 3000, identities: 3000, platformIdentities: 20_000 })
 *   // [{ strategy: "listing", requests: 20, ... }, { strategy: "per-identity", requests: 3000, ... }]
 */
export function reverifyStrategyCosts(input: ReverifyInput): StrategyCost[] {
  return [
    {
      strategy: "listing",
      requests: Math.ceil(Math.max(1, input.platformIdentities) / LISTING_PAGE),
      path: PATHS.identities,
      sharesCreateBudget: false,
    },
    {
      strategy: "per-identity",
      requests: input.identities,
      path: PATHS.controls,
      sharesCreateBudget: true,
    },
  ];
}

/**
 * The cheapest strategy: fewest requests; on a tie, the one that leaves the creates' budget alone.
 * Pure, so the choice is unit-tested on its own.
 *
 * @example
 *   chooseReverifyStrategy(reverifyStrategyCosts({ actions: 3, identities: 3, platformIdentities: 20_000 }))
 *   // { strategy: "per-identity", requests: 3, reason: "3 per-identity reads ... < listing ≈ 20 ..." }
 */
export function chooseReverifyStrategy(costs: readonly StrategyCost[]): {
  readonly strategy: ReverifyStrategy;
  readonly requests: number;
  readonly reason: string;
} {
  const ranked = [...costs].sort(
    (a, b) =>
      a.requests - b.requests || Number(a.sharesCreateBudget) - Number(b.sharesCreateBudget),
  );
  const best = ranked[0];
  if (!best) throw new Error("no re-verification strategy to choose from");
  const describe = (c: StrategyCost) =>
    `${c.strategy} ≈ ${c.requests} requests on ${c.path}${c.sharesCreateBudget ? " (the creates' budget)" : ""}`;
  const others = ranked.slice(1).map(describe).join(", ");
  return {
    strategy: best.strategy,
    requests: best.requests,
    reason: others ? `${describe(best)}, cheapest against ${others}` : describe(best),
  };
}

/** What re-verification needs; the executor's context provides it. */
export interface ReverifyContext {
  readonly db: Kysely<Database>;
  readonly client: PlatformClient;
  readonly runId: string;
  readonly logger: Logger;
  readonly signal?: AbortSignal;
}

/** How the re-read pending actions ended. */
export interface ReverifyResult {
  readonly strategy: ReverifyStrategy | null;
  readonly reread: number;
  readonly adopted: number;
  readonly alreadyDeleted: number;
  readonly notFound: number;
  readonly readFailed: number;
}

interface Tally {
  adopted: number;
  alreadyDeleted: number;
  notFound: number;
  readFailed: number;
}

const PAGE = 500;

/**
 * Re-reads the platform state of every pending action of `runId` journaled (or last re-read)
 * before this process started, and settles those the platform already settled. Call it before
 * sending anything; a run whose actions were all decided in this process costs one query.
 *
 * @example
 *   const r = await reverifyPending(ctx);
 *   // r.adopted: creates that someone else made meanwhile, now adopted instead of duplicated
 */
export async function reverifyPending(
  ctx: ReverifyContext,
  runId = ctx.runId,
): Promise<ReverifyResult> {
  const since = await serverTimeAgo(ctx.db, process.uptime());
  const stale = await countStalePending(ctx.db, runId, since);
  if (stale.actions === 0) {
    return { strategy: null, reread: 0, adopted: 0, alreadyDeleted: 0, notFound: 0, readFailed: 0 };
  }
  const platformIdentities = await estimatePlatformIdentities(ctx.db, runId);
  const choice = chooseReverifyStrategy(reverifyStrategyCosts({ ...stale, platformIdentities }));
  ctx.logger.info(
    `Re-reading ${stale.actions} pending actions decided before this process started (${choice.reason}).`,
  );
  const tally: Tally = { adopted: 0, alreadyDeleted: 0, notFound: 0, readFailed: 0 };
  await SETTLERS[choice.strategy](ctx, runId, since, tally);
  const changed = [
    tally.adopted ? `${tally.adopted} creates adopted (a matching control appeared meanwhile)` : "",
    tally.alreadyDeleted ? `${tally.alreadyDeleted} deletes already done` : "",
    tally.notFound ? `${tally.notFound} identities no longer on the platform` : "",
    tally.readFailed ? `${tally.readFailed} could not be read (not sent; a re-run retries)` : "",
  ].filter(Boolean);
  ctx.logger.info(
    `Re-read ${stale.actions} pending actions: ${changed.length ? changed.join(", ") : "all still to do"}.`,
  );
  return { strategy: choice.strategy, reread: stale.actions, ...tally };
}

type Settler = (ctx: ReverifyContext, runId: string, since: Date, tally: Tally) => Promise<void>;

const SETTLERS: Record<ReverifyStrategy, Settler> = {
  listing: settleByListing,
  "per-identity": settleByReads,
};

/** One pass over every platform identity; the pending actions of each page are settled from it. */
async function settleByListing(
  ctx: ReverifyContext,
  runId: string,
  since: Date,
  tally: Tally,
): Promise<void> {
  for await (const page of ctx.client.listIdentities({ limit: LISTING_PAGE, signal: ctx.signal })) {
    const controls = new Map(page.map((i) => [i.id, i.activeControls]));
    const actions = await stalePendingPage(ctx.db, runId, since, 0, 10 * LISTING_PAGE, [
      ...controls.keys(),
    ]);
    const fresh: number[] = [];
    for (const a of actions) {
      if (!(await settle(ctx, a, controls.get(a.identity_id) ?? [], tally))) fresh.push(a.id);
    }
    await touchActions(ctx.db, fresh);
  }
  // The listing was complete: what it never showed is not on the platform.
  for (let page = await stalePendingPage(ctx.db, runId, since, 0, PAGE); page.length > 0; ) {
    for (const a of page) {
      await notFound(ctx, a, "absent from a complete listing of the platform's identities", tally);
    }
    page = await stalePendingPage(ctx.db, runId, since, page.at(-1)!.id, PAGE);
  }
}

/** One read of the controls of each identity with a pending action. */
async function settleByReads(
  ctx: ReverifyContext,
  runId: string,
  since: Date,
  tally: Tally,
): Promise<void> {
  let after = 0;
  for (;;) {
    const page = await stalePendingPage(ctx.db, runId, since, after, PAGE);
    if (page.length === 0) return;
    after = page.at(-1)!.id;
    const byIdentity = new Map<string, Action[]>();
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

/** Settles `a` if the platform already did what it intends; false when it is still to do. */
async function settle(
  ctx: ReverifyContext,
  a: Action,
  controls: readonly IdentityControl[],
  tally: Tally,
): Promise<boolean> {
  const active = controls.filter((c) => !c.deletedAt);
  if (a.action === "create") {
    // The same rule as settling an ambiguous create: an active client control of the type,
    // overridable ones first.
    const hit = active
      .filter((c) => c.type === a.control_type && c.setBy === "client")
      .sort((x, y) => Number(y.isOverridable) - Number(x.isOverridable))[0];
    if (!hit) return false;
    await updateAction(ctx.db, a.id, {
      status: "succeeded",
      outcome: "adopted",
      result_control_id: hit.id,
      error: null,
    });
    tally.adopted += 1;
    return true;
  }
  if (active.some((c) => c.id === a.control_key)) return false;
  await updateAction(ctx.db, a.id, {
    status: "succeeded",
    outcome: "already_deleted",
    error: null,
  });
  tally.alreadyDeleted += 1;
  return true;
}

async function notFound(ctx: ReverifyContext, a: Action, why: string, tally: Tally) {
  await updateAction(ctx.db, a.id, {
    status: "failed",
    outcome: "identity_not_found",
    error: `re-read before sending: ${why}`,
  });
  tally.notFound += 1;
}

async function readFailed(ctx: ReverifyContext, a: Action, err: PlatformError, tally: Tally) {
  await updateAction(ctx.db, a.id, {
    status: "failed",
    outcome: "read_failed",
    http_status: err.status ?? null,
    error: `not sent: its state could not be re-read (${err.message})`,
  });
  tally.readFailed += 1;
}

/**
 * The largest source row count of the run and the runs it came from (an `apply --plan` run copies
 * only its plan's candidates): the stand-in for the platform's identity count.
 */
async function estimatePlatformIdentities(db: Kysely<Database>, runId: string): Promise<number> {
  let most = 0;
  let id: string | null = runId;
  for (let depth = 0; id !== null && depth < 10; depth++) {
    const run = await getRun(db, id);
    const counts = (run?.counts ?? {}) as Record<string, number>;
    most = Math.max(most, Number(counts.source_rows_read ?? 0));
    id = run?.parent_run_id ?? null;
  }
  return most;
}
