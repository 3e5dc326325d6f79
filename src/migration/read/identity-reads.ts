/**
 * Identities read one by one (`GET /v2/identity/identities/{id}`) for what the state strategy did
 * not learn (issue 27): the platform's legacy fields of the candidates a filtered listing did not
 * show (and whether they exist), and those of the per-identity candidates whose findings depend
 * on them. The client's rate budget and concurrency pace the reads, as they pace per-identity's.
 */
import type { Kysely } from "kysely";
import { identityStatesPage } from "../../db/journal/finding-queries.ts";
import { insertSnapshot } from "../../db/journal/snapshot-queries.ts";
import { markedThenUnkeptPage } from "../../db/journal/three-way-queries.ts";
import type { Database, NewSnapshotIdentity } from "../../db/schema.ts";
import type { Logger } from "../../log.ts";
import { PATHS, type PlatformClient, PlatformError } from "../../platform/index.ts";
import { noun } from "../../plural.ts";
import { dependsOnPlatformLegacy } from "../classify/classify.ts";
import { toIdentityState } from "../classify/findings.ts";
import type { Progress } from "../steer/progress.ts";
import { endpointBudget } from "../steer/progress-rate.ts";
import { listedIdentityOf, type ReadIdentity } from "./listed-identity.ts";
import { snapshotIdentity } from "./three-way-listing.ts";

export interface IdentityReadContext {
  readonly db: Kysely<Database>;
  readonly client: PlatformClient;
  readonly runId: string;
  readonly logger: Logger;
  /** Ticked once per read; the caller starts and stops its phase. */
  readonly progress?: Progress;
  readonly signal?: AbortSignal;
}

/** Candidates a page of the per-identity pass weighs at once. */
const PAGE = 1000;

/**
 * Reads identities by id, side by side within the client's budget. A 404 is `not_found`; a read
 * that still fails after the client's retries is `error`, with its reason. Cancellation and a
 * refused token stop the run.
 *
 * @example
 *   const reads = await readIdentities(ctx, ["id-1", "id-2"]);
 */
export function readIdentities(
  ctx: IdentityReadContext,
  ids: readonly string[],
): Promise<ReadIdentity[]> {
  return Promise.all(
    ids.map(async (id): Promise<ReadIdentity> => {
      try {
        const identity = await ctx.client.getIdentity(id, { signal: ctx.signal });
        // Keyed by the id asked for: the findings are the candidate's.
        return { status: "found", identity: listedIdentityOf(ctx.runId, { ...identity, id }) };
      } catch (err) {
        if (!(err instanceof PlatformError) || err.kind === "cancelled") throw err;
        if (err.kind === "unauthorized" || err.kind === "forbidden") throw err;
        if (err.kind === "not_found") return { status: "not_found", id, error: err.detail };
        return { status: "error", id, error: `reading the identity failed: ${err.message}` };
      } finally {
        ctx.progress?.tick();
      }
    }),
  );
}

/**
 * The per-identity strategy's second pass: a candidate whose controls leave a flagged side
 * without its control (`dependsOnPlatformLegacy`) is read by id, and its legacy fields are stored
 * with its snapshot row, so the three-way rules apply to it as to a listed one. A 404 there (the
 * identity went since its controls were read) is stored as not found, a failed read as an error.
 * Returns how many identities were read.
 *
 * @example
 *   const read = await readLegacyWhereNeeded(ctx);
 */
export async function readLegacyWhereNeeded(ctx: IdentityReadContext): Promise<number> {
  const { db, runId } = ctx;
  let after: string | null = null;
  let read = 0;
  let notFound = 0;
  ctx.progress?.start("platform legacy fields", null, {
    rateCap: endpointBudget(ctx.client, PATHS.identity),
  });
  for (;;) {
    const rows = await identityStatesPage(db, runId, after, PAGE);
    if (rows.length === 0) break;
    after = rows[rows.length - 1]?.identity_id ?? null;
    const ids = rows
      .filter((row) => row.status === "found" && dependsOnPlatformLegacy(toIdentityState(row)))
      .map((row) => row.identity_id);
    if (ids.length === 0) continue;
    const stored: NewSnapshotIdentity[] = [];
    for (const r of await readIdentities(ctx, ids)) {
      if (r.status === "found") stored.push(snapshotIdentity(runId, r.identity, "by_id"));
      else {
        if (r.status === "not_found") notFound += 1;
        const via = r.status === "not_found" ? "by_id" : null;
        stored.push({
          run_id: runId,
          identity_id: r.id,
          status: r.status,
          error: r.error,
          observed_via: via,
        });
      }
    }
    // Upserts the identity rows only: the controls read a moment ago stay as they are.
    await insertSnapshot(db, stored, []);
    read += ids.length;
  }
  ctx.progress?.stop();
  if (read > 0) {
    ctx.logger.info(
      `platform: read ${read} ${noun(read, "identity", "identities")} by id for the platform's legacy fields (no control settles ${read === 1 ? "its" : "their"} findings)${notFound > 0 ? `; ${notFound} no longer on the platform` : ""}`,
    );
  }
  return read;
}

/**
 * After a complete listing: the identities run `sinceId` read with a platform legacy field true
 * that this listing did not keep (no control, no source row, both fields false now, or gone) are
 * read by id, and those found are stored with their fields, so the field cleared on the platform
 * is a change like any other (`platform_field_cleared`). A 404 or a failed read stores nothing.
 * Returns how many were found.
 *
 * @example
 *   const found = await readMarkedThenUnkept(ctx, since.id);
 */
export async function readMarkedThenUnkept(
  ctx: IdentityReadContext,
  sinceId: string,
): Promise<number> {
  let after: string | null = null;
  let found = 0;
  for (;;) {
    const ids = await markedThenUnkeptPage(ctx.db, ctx.runId, sinceId, after, PAGE);
    if (ids.length === 0) break;
    after = ids[ids.length - 1] ?? null;
    const reads = await readIdentities(ctx, ids);
    const stored: NewSnapshotIdentity[] = [];
    const controls = [];
    for (const r of reads) {
      if (r.status !== "found") continue;
      stored.push(snapshotIdentity(ctx.runId, r.identity, "by_id"));
      controls.push(...r.identity.controls);
    }
    await insertSnapshot(ctx.db, stored, controls);
    found += stored.length;
  }
  return found;
}
