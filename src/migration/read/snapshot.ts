import type { Kysely } from "kysely";
import type { SourceConfig } from "../../config.ts";
import { MAX_PAGE_SIZE } from "../../contract/index.ts";
import { journalIdentitiesOutsideSource } from "../../db/journal/journal-queries.ts";
import {
  analyzeRunTables,
  candidatePage,
  clearSnapshotOf,
  insertSnapshot,
} from "../../db/journal/snapshot-queries.ts";
import type { SnapshotStatus } from "../../db/observation-tables.ts";
import type { Database, NewSnapshotControl, NewSnapshotIdentity } from "../../db/schema.ts";
import type { Logger } from "../../log.ts";
import { PATHS, type PlatformClient, PlatformError } from "../../platform/index.ts";
import { noun } from "../../plural.ts";
import type { FindingsMemory } from "../classify/findings-stream-types.ts";
import type { Progress } from "../steer/progress.ts";
import { endpointBudget } from "../steer/progress-rate.ts";
import { controlRow, type ListedIdentity, listedIdentityOf } from "./listed-identity.ts";
import { listPartitioned } from "./partitioned-listing.ts";
import { addLookedUpRows } from "./source-stage.ts";
import type { ChosenStrategy } from "./state-strategy.ts";
import { snapshotIdentity } from "./three-way-listing.ts";

/** How listings are read: the run's rate budget and how many cursors may run at once. */
export interface ListingSettings {
  /** Requests per second per endpoint path (--rate). */
  readonly rate: number;
  /** Most cursors of one listing at once (--listing-parallelism, bounded by --concurrency). */
  readonly maxParallel: number;
  readonly retryBaseMs: number;
  /** Identities per listing page; the platform's maximum, 1000, unless a test asks for less. */
  readonly pageSize?: number;
}

export interface SnapshotContext {
  readonly db: Kysely<Database>;
  readonly client: PlatformClient;
  readonly source: SourceConfig;
  readonly runId: string;
  readonly logger: Logger;
  readonly progress: Progress;
  readonly listing: ListingSettings;
  readonly signal?: AbortSignal;
  /** PGlite: one statement at a time; the findings stream groups its writes. */
  readonly serialDatabase?: boolean;
  /** What the findings stream may hold in memory (its defaults unless a test bounds it lower). */
  readonly findingsMemory?: FindingsMemory;
}

export interface SnapshotResult {
  readonly strategy: ChosenStrategy;
  readonly identitiesObserved: number;
}

/** What a listing read, kept in summary.json: the next run's `auto` and windows start from it. */
export interface ListingFigures {
  /** `none` (bulk) or the control types listed (`SELL_ONLY` for filtered). */
  readonly filter: string;
  readonly pages: number;
  readonly identities: number;
  readonly sell_only_identities: number;
  readonly created_at_min: string | null;
  readonly created_at_max: string | null;
  readonly latency_p50_ms: number | null;
  readonly peak_parallel: number;
  readonly windows: number;
  readonly window_retries: number;
  /** Identities read twice where two cursors met, stored once. */
  readonly duplicates: number;
  /** Copies of identities the listing served more than once, stored once (a platform anomaly). */
  readonly repeated_identities?: number;
  /**
   * Candidates a bulk listing left out that a read by id found (issue 50): classified from that
   * read, never `identity_not_found`. 0 for a filtered listing, which shows only SELL_ONLY holders.
   */
  readonly omitted?: number;
}

/** A hint from an earlier run's listing of the same kind. */
export interface ListingHint {
  readonly expectedItems: number | null;
  readonly latencyMs: number | null;
}

const PAGE = MAX_PAGE_SIZE;

/**
 * A listing: bulk reads every platform identity, filtered only those holding an active
 * SELL_ONLY (`control_types=SELL_ONLY`), each 1000 a page with `status_details.active_controls`,
 * in created_at windows side by side when the page latency would otherwise set the pace.
 * Independent of the source pass, so the two run side by side.
 *
 * Each page goes to `sink` (the findings stream, which stores it with its findings) or, without
 * one, to the snapshot whole.
 */
export async function listPlatform(
  ctx: SnapshotContext,
  kind: "bulk" | "filtered",
  hint: ListingHint,
  sink?: (identities: ListedIdentity[]) => Promise<void>,
): Promise<ListingFigures> {
  const { db, client, runId, progress } = ctx;
  const latencyKey = `GET ${PATHS.identities}`;
  progress.start(kind === "bulk" ? "platform" : "platform SELL_ONLY", hint.expectedItems);
  // Counted as listed: pages never share an identity.
  let sellOnly = 0;
  const stats = await listPartitioned({
    list: (opts) => client.listIdentities(opts),
    controlTypes: kind === "filtered" ? ["SELL_ONLY"] : undefined,
    maxParallel: ctx.listing.maxParallel,
    rate: () => client.metrics().budgets[PATHS.identities]?.rate ?? ctx.listing.rate,
    latencyMs: () => client.metrics().endpoints[latencyKey]?.latencyMs.p50 ?? null,
    latencyHintMs: hint.latencyMs,
    expectedItems: hint.expectedItems,
    retryBaseMs: ctx.listing.retryBaseMs,
    pageSize: ctx.listing.pageSize,
    logger: ctx.logger,
    signal: ctx.signal,
    onPage: async (page) => {
      const listed = page.map((identity): ListedIdentity => {
        const item = listedIdentityOf(runId, identity);
        if (item.controls.some((c) => c.type === "SELL_ONLY")) sellOnly += 1;
        return item;
      });
      if (sink) await sink(listed);
      else {
        await insertSnapshot(
          db,
          listed.map((i) => snapshotIdentity(runId, i, "listing")),
          listed.flatMap((i) => i.controls),
        );
      }
      progress.tick(page.length);
    },
  });
  progress.stop();
  const figures: ListingFigures = {
    filter: kind === "filtered" ? "SELL_ONLY" : "none",
    pages: stats.pages,
    identities: stats.identities,
    sell_only_identities: sellOnly,
    created_at_min: stats.createdAtMin,
    created_at_max: stats.createdAtMax,
    latency_p50_ms: client.metrics().endpoints[latencyKey]?.latencyMs.p50 ?? null,
    peak_parallel: stats.peakParallel,
    windows: stats.windows,
    window_retries: stats.windowRetries,
    duplicates: stats.duplicates,
  };
  ctx.logger.info(
    `platform: listed ${figures.identities} ${noun(figures.identities, "identity", "identities")}${kind === "filtered" ? " holding a SELL_ONLY" : ""} in ${figures.pages} ${noun(figures.pages, "page")} (${figures.peak_parallel} cursor${figures.peak_parallel === 1 ? "" : "s"} at most, ${figures.windows} window${figures.windows === 1 ? "" : "s"})`,
  );
  return figures;
}

/** Per identity: list the controls of each candidate (and of identities the tool acted on before). */
export async function perIdentitySnapshot(ctx: SnapshotContext): Promise<SnapshotResult> {
  const { db, runId } = ctx;
  const earlier = await journalIdentitiesOutsideSource(db, runId);
  for (let i = 0; i < earlier.length; i += PAGE) {
    await addLookedUpRows(db, ctx.source, runId, earlier.slice(i, i + PAGE));
  }
  let after: string | null = null;
  let observed = 0;
  ctx.progress.start("platform", null, { rateCap: endpointBudget(ctx.client, PATHS.controls) });
  for (;;) {
    const ids = await candidatePage(db, runId, after, PAGE);
    if (ids.length === 0) break;
    await observeIdentities(ctx, ids);
    observed += ids.length;
    after = ids[ids.length - 1] ?? null;
  }
  ctx.progress.stop();
  await analyzeRunTables(db, "snapshot");
  return { strategy: "per-identity", identitiesObserved: observed };
}

/**
 * Lists the active controls of the given identities (concurrently, within the client's budget) and
 * records them, replacing anything observed of them before in this run. A 404 is recorded as
 * not_found; a read that still fails after the client's retries as error, with its reason.
 */
export async function observeIdentities(ctx: SnapshotContext, ids: string[]): Promise<void> {
  const { client, runId } = ctx;
  const idRows: NewSnapshotIdentity[] = [];
  const controls: NewSnapshotControl[] = [];
  const row = (id: string, status: SnapshotStatus, error: string | null) => ({
    run_id: runId,
    identity_id: id,
    status,
    error,
  });
  await Promise.all(
    ids.map(async (id) => {
      try {
        const list = await client.listIdentityControls(id, { signal: ctx.signal });
        idRows.push({ ...row(id, "found", null), observed_via: "by_id" });
        for (const c of list) if (!c.deletedAt) controls.push(controlRow(runId, id, c));
      } catch (err) {
        if (!(err instanceof PlatformError) || err.kind === "cancelled") throw err;
        if (err.kind === "not_found") {
          idRows.push({ ...row(id, "not_found", err.detail), observed_via: "by_id" });
        } else if (err.kind === "unauthorized" || err.kind === "forbidden") {
          throw err;
        } else {
          idRows.push(row(id, "error", err.message));
        }
      } finally {
        ctx.progress.tick();
      }
    }),
  );
  await clearSnapshotOf(ctx.db, runId, ids);
  await insertSnapshot(ctx.db, idRows, controls);
}
