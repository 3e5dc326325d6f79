/**
 * Findings while a listing runs, so that little is left once its last page is in.
 *
 * The source pass is ordered by identity id, the listing by created_at (in windows read side by
 * side), so no identity range is "passed" by both until one of them is complete. The source pass
 * is the faster (it waits on the database, the listing on the rate budget), so it is the one
 * waited for:
 *
 * - pages stored before the source pass is complete are only stored; once it is, a catch-up walks
 *   the listed identities in id order (keyset ranges) and classifies them;
 * - pages stored after it are classified as they are stored;
 * - once the listing is complete, what no page listed is classified: under bulk a candidate absent
 *   from the complete listing is not found, under filtered it holds no active SELL_ONLY.
 *
 * One worker classifies, one range at a time, each range in one transaction with its journal
 * actions: an identity already classified in this run is skipped (`unclassifiedStatesOf`), so a
 * page and the catch-up may both name it and it is still classified once. Before an identity
 * holding a SELL_ONLY is classified, its source row is looked up by id if the source pass did not
 * keep it (it has no flag true), so `unknown_to_source` keeps its meaning. Pages wait while the
 * worker is more than a few ranges behind, so memory stays flat.
 */
import type { Kysely } from "kysely";
import type { SourceConfig } from "../config.ts";
import {
  insertInvalidRowFindings,
  listedInterestingPage,
  unclassifiedStatesOf,
  unlistedCandidatesPage,
} from "../db/finding-queries.ts";
import type { Database } from "../db/schema.ts";
import {
  analyzeRunTables,
  insertSnapshot,
  sellOnlyHoldersOutsideSource,
} from "../db/snapshot-queries.ts";
import type { Logger } from "../log.ts";
import { type FindingsOptions, storeFindings } from "./findings.ts";
import { addLookedUpRows } from "./source-stage.ts";

export interface FindingsStreamContext {
  readonly db: Kysely<Database>;
  readonly source: SourceConfig;
  readonly runId: string;
  readonly logger: Logger;
}

/** What the stream classified, and when. */
export interface FindingsStreamCounts {
  /** Identities classified from pages as they were stored. */
  readonly asListed: number;
  /** Identities listed before the source pass was complete, caught up by id range. */
  readonly caughtUp: number;
  /** Candidates no page listed, classified once the listing was complete. */
  readonly unlisted: number;
  readonly actions: number;
}

export interface FindingsStream {
  /**
   * A listing page's identities are stored (committed). Resolves once the worker has room again;
   * rejects if classifying failed, which stops the listing.
   */
  pageStored(identityIds: readonly string[]): Promise<void>;
  /** The source pass is complete and stored: classifying starts. */
  sourceComplete(): Promise<void>;
  /** The listing is complete: classifies what is left and resolves when every finding is stored. */
  finish(kind: "bulk" | "filtered"): Promise<FindingsStreamCounts>;
  /** Stops the worker (after a failure elsewhere); never throws. */
  close(): Promise<void>;
}

/** Identities a catch-up or unlisted range classifies at once. */
const RANGE = 5000;
/** Pages waiting for the worker before a page's store waits too. */
const MAX_QUEUED = 16;
/** Identities of queued pages classified together, at most. */
const BATCH_IDS = 10_000;
const NOT_LISTED = "absent from a complete listing of the platform's identities";

/**
 * Starts a findings stream for one run. Call `sourceComplete` when the source pass is stored,
 * `pageStored` after each listing page, then `finish` once the listing is complete; `close` in a
 * `finally`.
 *
 * @example
 *   const stream = startFindingsStream(ctx, { journalCreates: true, journalDeletes: false });
 *   try {
 *     await Promise.all([
 *       loadSource(...).then(async (c) => { await stream.sourceComplete(); return c; }),
 *       listPlatform(ctx, "bulk", hint, (ids) => stream.pageStored(ids)),
 *     ]);
 *     await stream.finish("bulk");
 *   } finally {
 *     await stream.close();
 *   }
 */
export function startFindingsStream(
  ctx: FindingsStreamContext,
  options: Omit<FindingsOptions, "unlistedHoldNoSellOnly">,
): FindingsStream {
  const { db, runId } = ctx;
  const queue: string[][] = [];
  const roomWaiters: (() => void)[] = [];
  let sourceDone = false;
  let caughtUp = false;
  let catchUpAfter: string | null = null;
  let finishing = false;
  let closed = false;
  let failure: { err: unknown } | null = null;
  let worker: Promise<void> | null = null;
  let wake: (() => void) | null = null;
  const counts = { asListed: 0, caughtUp: 0, unlisted: 0, actions: 0 };

  const nudge = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const freeRoom = () => {
    while (roomWaiters.length > 0 && (queue.length <= MAX_QUEUED || failure || closed)) {
      roomWaiters.shift()?.();
    }
  };

  /** Looks up the source rows a range needs, then classifies what is not classified yet. */
  async function classify(ids: readonly string[], unlisted = false): Promise<number> {
    const outside = await sellOnlyHoldersOutsideSource(db, runId, ids);
    if (outside.length > 0) await addLookedUpRows(db, ctx.source, runId, outside);
    const rows = await unclassifiedStatesOf(db, runId, ids);
    counts.actions += await storeFindings(db, runId, rows, {
      ...options,
      unlistedHoldNoSellOnly: unlisted,
    });
    return rows.length;
  }

  async function work(): Promise<void> {
    while (!failure && !closed) {
      if (queue.length > 0) {
        // Pages that queued while the worker was busy are classified together: one set of
        // statements for several pages, so a worker that fell behind catches up.
        const batch: string[] = [];
        while (queue.length > 0 && batch.length < BATCH_IDS) batch.push(...(queue.shift() ?? []));
        freeRoom();
        counts.asListed += await classify(batch);
        continue;
      }
      if (!caughtUp) {
        const ids = await listedInterestingPage(db, runId, catchUpAfter, RANGE);
        if (ids.length === 0) caughtUp = true;
        else {
          catchUpAfter = ids[ids.length - 1] ?? null;
          counts.caughtUp += await classify(ids);
        }
        continue;
      }
      if (finishing) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  }

  const rethrow = () => {
    if (failure) throw failure.err;
  };

  return {
    async pageStored(identityIds) {
      rethrow();
      // Stored before the source pass was complete: the catch-up, which starts after it, sees it.
      if (!sourceDone || identityIds.length === 0) return;
      queue.push([...identityIds]);
      nudge();
      while (queue.length > MAX_QUEUED && !failure && !closed) {
        await new Promise<void>((resolve) => roomWaiters.push(resolve));
      }
      rethrow();
    },

    async sourceComplete() {
      await insertInvalidRowFindings(db, runId);
      // The catch-up joins what is listed so far; statistics of this run, not the previous one's.
      await analyzeRunTables(db, "snapshot");
      sourceDone = true;
      worker = work().catch((err) => {
        failure ??= { err };
        freeRoom();
      });
    },

    async finish(kind) {
      if (!worker) throw new Error("findings stream: finish() before sourceComplete()");
      finishing = true;
      nudge();
      await worker;
      rethrow();
      await analyzeRunTables(db, "snapshot");
      let after: string | null = null;
      for (;;) {
        const ids = await unlistedCandidatesPage(db, runId, after, RANGE);
        if (ids.length === 0) break;
        after = ids[ids.length - 1] ?? null;
        if (kind === "bulk") {
          const missing = ids.map((id) => ({
            run_id: runId,
            identity_id: id,
            status: "not_found" as const,
            error: NOT_LISTED,
          }));
          await insertSnapshot(db, missing, []);
        }
        counts.unlisted += await classify(ids, kind === "filtered");
      }
      if (kind === "bulk" && counts.unlisted > 0) {
        ctx.logger.warn(
          `${counts.unlisted} candidate identities are absent from the platform's listing`,
        );
      }
      await analyzeRunTables(db, "journal");
      return { ...counts };
    },

    async close() {
      closed = true;
      nudge();
      freeRoom();
      await worker?.catch(() => {});
    },
  };
}
