import type { Kysely } from "kysely";
import type { SourceConfig } from "../config.ts";
import { journalIdentitiesOutsideSource } from "../db/journal-queries.ts";
import type { Database, NewSnapshotControl, NewSnapshotIdentity } from "../db/schema.ts";
import {
  analyzeRunTables,
  candidatePage,
  clearSnapshotOf,
  insertSnapshot,
  markUnlistedCandidatesNotFound,
  sellOnlyIdentitiesOutsideSource,
} from "../db/snapshot-queries.ts";
import type { Logger } from "../log.ts";
import { type IdentityControl, type PlatformClient, PlatformError } from "../platform/index.ts";
import type { Progress } from "./progress.ts";
import { addLookedUpRows } from "./source-stage.ts";

export type StateStrategy = "auto" | "bulk" | "per-identity";

export interface SnapshotContext {
  readonly db: Kysely<Database>;
  readonly client: PlatformClient;
  readonly source: SourceConfig;
  readonly runId: string;
  readonly logger: Logger;
  readonly progress: Progress;
  readonly signal?: AbortSignal;
}

export interface SnapshotResult {
  readonly strategy: "bulk" | "per-identity";
  readonly identitiesObserved: number;
}

const PAGE = 1000;

/**
 * `auto` compares what each strategy costs in requests, from counts already known: a bulk listing
 * costs one request per 1000 platform identities (the source table's size stands in for the
 * platform's), per-identity one request per candidate.
 */
export function chooseStrategy(
  requested: StateStrategy,
  known: { sourceRows: number; candidates: number },
): { strategy: "bulk" | "per-identity"; reason: string } {
  const bulkCost = Math.ceil(Math.max(1, known.sourceRows) / PAGE);
  const perCost = known.candidates;
  if (requested !== "auto") {
    return { strategy: requested, reason: `--state ${requested}` };
  }
  return bulkCost < perCost
    ? {
        strategy: "bulk",
        reason: `auto: bulk listing ≈ ${bulkCost} requests < ${perCost} per-identity requests`,
      }
    : {
        strategy: "per-identity",
        reason: `auto: ${perCost} per-identity requests ≤ bulk listing ≈ ${bulkCost} requests`,
      };
}

const controlRow = (runId: string, identityId: string, c: IdentityControl): NewSnapshotControl => ({
  run_id: runId,
  identity_id: identityId,
  control_id: c.id,
  type: c.type,
  set_by: c.setBy,
  set_by_raw: c.setByRaw,
  is_overridable: c.isOverridable,
  reason_code: c.reasonCode,
  reason: c.reason,
  created_at: c.createdAt,
  deleted_at: c.deletedAt,
});

/**
 * Bulk, part 1: every platform identity, 1000 a page, with `status_details.active_controls`.
 * Independent of the source pass, so the two run side by side.
 */
export async function listPlatform(
  ctx: SnapshotContext,
  expectedTotal: number | null,
): Promise<SnapshotResult> {
  const { db, client, runId, progress } = ctx;
  let observed = 0;
  progress.start("platform", expectedTotal);
  const listing = { limit: PAGE, signal: ctx.signal, expectedTotal: expectedTotal ?? undefined };
  for await (const page of client.listIdentities(listing)) {
    const ids: NewSnapshotIdentity[] = [];
    const controls: NewSnapshotControl[] = [];
    for (const identity of page) {
      ids.push({ run_id: runId, identity_id: identity.id, status: "found", error: null });
      for (const c of identity.activeControls) {
        if (!c.deletedAt) controls.push(controlRow(runId, identity.id, c));
      }
    }
    await insertSnapshot(db, ids, controls);
    observed += page.length;
    progress.tick(page.length);
  }
  progress.stop();
  return { strategy: "bulk", identitiesObserved: observed };
}

/**
 * Bulk, part 2, once both the listing and the source pass are stored: candidates the complete
 * listing lacks are not found; platform identities holding a SELL_ONLY that the source pass did
 * not keep get their source rows looked up.
 */
export async function settleBulkSnapshot(ctx: SnapshotContext): Promise<void> {
  const { db, runId } = ctx;
  await analyzeRunTables(db, "snapshot");
  const missing = await markUnlistedCandidatesNotFound(db, runId);
  if (missing > 0)
    ctx.logger.warn(`${missing} candidate identities are absent from the platform's listing`);
  // Platform identities with a SELL_ONLY that the source pass did not keep: fetch their flags.
  let after: string | null = null;
  for (;;) {
    const ids = await sellOnlyIdentitiesOutsideSource(db, runId, after, PAGE);
    if (ids.length === 0) break;
    await addLookedUpRows(db, ctx.source, runId, ids);
    after = ids[ids.length - 1] ?? null;
  }
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
  ctx.progress.start("platform", null);
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
  await Promise.all(
    ids.map(async (id) => {
      try {
        const list = await client.listIdentityControls(id, { signal: ctx.signal });
        idRows.push({ run_id: runId, identity_id: id, status: "found", error: null });
        for (const c of list) if (!c.deletedAt) controls.push(controlRow(runId, id, c));
      } catch (err) {
        if (!(err instanceof PlatformError) || err.kind === "cancelled") throw err;
        if (err.kind === "not_found") {
          idRows.push({ run_id: runId, identity_id: id, status: "not_found", error: err.detail });
        } else if (err.kind === "unauthorized" || err.kind === "forbidden") {
          throw err;
        } else {
          idRows.push({ run_id: runId, identity_id: id, status: "error", error: err.message });
        }
      } finally {
        ctx.progress.tick();
      }
    }),
  );
  await clearSnapshotOf(ctx.db, runId, ids);
  await insertSnapshot(ctx.db, idRows, controls);
}
