/**
 * `plan --since-last` / `reconcile --since-last` (issue 55): the platform's state read at the
 * cost of what changed since the last complete read of the same platform and source, or read
 * whole (the first run, every `--full-every`th, after a miss), saying which and why.
 */

import { markCarriedBare } from "../../db/journal/bare-queries.ts";
import {
  markCarried,
  markReadById,
  recordSince,
  sinceLastBasis,
} from "../../db/journal/incremental-queries.ts";
import { countSource } from "../../db/source/source-reader.ts";
import { UserError } from "../../errors.ts";
import { forgetSightingsOfClearedFlags } from "../execute/platform-wait.ts";
import { noteStage } from "../steer/run-stage.ts";
import { emptyCounts, incrementalLister } from "./incremental-listing.ts";
import { chooseSinceLast, type SinceLastSummary } from "./since-last-choice.ts";
import type { SnapshotContext } from "./snapshot.ts";
import type { SourceCounts } from "./source-stage.ts";
import { checkStaleIncremental } from "./stale-incremental.ts";
import {
  EXISTENCE,
  listWithFindings,
  type PlatformStateSummary,
  readPlatformState,
  type StateStageOptions,
} from "./state-stage.ts";

export interface SinceLastSettings {
  /** --since-margin-s. */
  readonly marginS: number;
  /** --full-every. */
  readonly fullEvery: number;
  /** The platform's key, as messages name it. */
  readonly platform: string;
}

/**
 * Reads the source and the platform's state as `--since-last` chooses: incrementally, or whole
 * with `--state bulk` (and, every `--full-every`th run, a check of the incremental runs since the
 * last complete one: `stale_incremental`). The choice and its reason are logged and returned in
 * `state.since_last`.
 *
 * @example
 *   const { source, state } = await readSinceLast(ctx, stateOptions, { marginS: 300, fullEvery: 7, platform });
 */
export async function readSinceLast(
  ctx: SnapshotContext,
  opts: StateStageOptions,
  settings: SinceLastSettings,
): Promise<{ source: SourceCounts; state: PlatformStateSummary }> {
  if (opts.requested !== "auto" && opts.requested !== "bulk") {
    throw new UserError(
      `--since-last cannot be combined with --state ${opts.requested}: it builds on a complete listing of every identity and reads whole with --state bulk. Leave --state out (or give bulk).`,
    );
  }
  const basis = await sinceLastBasis(ctx.db, ctx.runId);
  const choice = chooseSinceLast(basis, settings, settings.platform);
  ctx.logger.info(`--since-last: ${choice.reason}`);
  if (choice.mode === "complete") {
    const read = await readPlatformState(ctx, { ...opts, requested: "bulk" });
    let since_last: SinceLastSummary = { mode: "complete", reason: choice.reason };
    if (choice.check && basis.complete) {
      const check = await checkStaleIncremental(ctx, basis.complete.id, settings);
      since_last = { ...since_last, ...check };
    }
    return { source: read.source, state: { ...read.state, since_last } };
  }
  await recordSince(ctx.db, ctx.runId, {
    at: choice.sinceAt,
    completeId: choice.completeId,
    viewId: choice.viewId,
  });
  const known = await countSource(ctx.db, ctx.source);
  const journal = {
    journalCreates: opts.writes,
    journalDeletes: opts.prune,
    waitForPlatform: opts.waitForPlatform,
  };
  await noteStage(ctx.db, ctx.runId, "reading the source and the platform");
  const counts = emptyCounts();
  const basisRuns = { viewId: choice.viewId, completeId: choice.completeId };
  const lister = incrementalLister(ctx, choice.sinceAt, basisRuns, counts);
  const hint = { expectedItems: null, latencyMs: null };
  const [source] = await listWithFindings(ctx, "bulk", hint, journal, known.anyFlag, lister);
  await forgetSightingsOfClearedFlags(ctx.db, ctx.runId);
  const held = await markCarried(ctx.db, ctx.runId, choice.viewId, counts.excluded);
  await markCarriedBare(ctx.db, ctx.runId, choice.completeId, counts.bare);
  await markReadById(ctx.db, ctx.runId, counts.readHere);
  const carried = held + counts.bare.length;
  const b = counts.because;
  ctx.logger.info(
    `--since-last: ${counts.listed} identities listed as changed in ${counts.pages} page${counts.pages === 1 ? "" : "s"}, ${counts.reread.length} read again by id (source row changed and never observed: ${b.source_changed}; a finding that needs the platform: ${b.needs_platform_state}; written to since: ${b.written}), ${carried} carried as last observed (${counts.bare.length} of them candidates whose source row changed, bare in the complete run ${choice.completeId})`,
  );
  const since_last: SinceLastSummary = {
    mode: "incremental",
    reason: choice.reason,
    since: choice.sinceAt.toISOString(),
    since_run_id: choice.completeId,
    view_run_id: choice.viewId,
    listed_changed: counts.listed,
    read_by_id: counts.reread.length,
    read_by_id_because: { ...counts.because },
    carried_bare: counts.bare.length,
  };
  const state = { strategy: "bulk" as const, reason: choice.reason, existence: EXISTENCE.bulk };
  return { source, state: { ...state, listing: null, since_last } };
}
