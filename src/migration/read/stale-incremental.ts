/**
 * Proof, not faith (issue 55 §2): a complete `--since-last` run compares what it read with what
 * the last incremental run since the previous complete read carried. An identity whose state
 * changed though the platform never listed it as changed since is a `stale_incremental` finding:
 * the platform did not move its `updated_at` for that change, and the next `--since-last` reads
 * everything again (`since-last-choice.ts`).
 */
import {
  incrementalMisses,
  insertStaleFindings,
  lastIncremental,
  type Miss,
} from "../../db/journal/stale-incremental-queries.ts";
import type { SnapshotContext } from "./snapshot.ts";
import { LISTING_PAGE } from "./state-strategy.ts";

/** What the check found, for summary.json's `platform_state.since_last`. */
export interface StaleCheck {
  readonly checked_runs: number;
  readonly stale_incremental: number;
}

/**
 * Compares this complete run's snapshot with the last incremental run built on `completeId`, and
 * stores a `stale_incremental` finding per miss. Identities the platform lists as changed since
 * that incremental run started (less `marginS`) are left out: their change may have come after
 * it. Costs one listing of those.
 *
 * @example
 *   const check = await checkStaleIncremental(ctx, complete.id, { marginS: 300, platform });
 */
export async function checkStaleIncremental(
  ctx: SnapshotContext,
  completeId: string,
  o: { readonly marginS: number; readonly platform: string },
): Promise<StaleCheck> {
  const inc = await lastIncremental(ctx.db, ctx.runId, completeId);
  if (!inc) return { checked_runs: 0, stale_incremental: 0 };
  const since = new Date(inc.startedAt.getTime() - o.marginS * 1000);
  const changed: string[] = [];
  const pages = ctx.client.listIdentities({
    limit: ctx.listing.pageSize ?? LISTING_PAGE,
    order: "ASC",
    updatedAtGte: since.toISOString(),
    signal: ctx.signal,
  });
  for await (const page of pages) for (const i of page) changed.push(i.id);
  const misses = await incrementalMisses(ctx.db, ctx.runId, inc.id, changed);
  await insertStaleFindings(
    ctx.db,
    ctx.runId,
    misses.map((m) => ({ identity_id: m.identity_id, detail: detailOf(m, inc.id, since) })),
  );
  if (misses.length > 0) {
    const first = misses.slice(0, 3).map((m) => m.identity_id);
    ctx.logger.warn(
      `--since-last: stale_incremental: ${misses.length} ${misses.length === 1 ? "identity" : "identities"} changed on platform ${o.platform} without the platform listing them as changed (updated_at), so the incremental run ${inc.id} missed ${misses.length === 1 ? "it" : "them"} (${first.join(", ")}${misses.length > 3 ? ", ..." : ""}); the next --since-last reads everything`,
    );
  } else {
    ctx.logger.info(
      `--since-last: the incremental run ${inc.id} missed no change this complete read found`,
    );
  }
  return { checked_runs: 1, stale_incremental: misses.length };
}

function detailOf(m: Miss, incId: string, since: Date): string {
  const what: string[] = [];
  if (m.then_controls !== m.now_controls) {
    what.push(`controls ${m.then_controls || "none"} → ${m.now_controls || "none"}`);
  }
  if (m.then_fields !== m.now_fields) what.push(`${m.then_fields} → ${m.now_fields}`);
  return `incremental run ${incId} carried this identity as run ${m.seen_by} observed it; this complete read found ${what.join("; ")}, and the platform lists no change of it since ${since.toISOString()}`;
}
