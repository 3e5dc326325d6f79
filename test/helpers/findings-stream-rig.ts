/**
 * What the findings-stream tests share: a run row and its snapshot context over a test database,
 * and the run's findings and journal read back in a fixed order, to compare two runs row by row.
 *
 * @example
 *   const ctx = await startStreamRun(h.db, client, "20260101-000001-feed", { pageSize: 3 });
 *   assert.deepEqual(await findingsOf(h.db, other.runId), await findingsOf(h.db, ctx.runId));
 */
import { type Kysely, sql } from "kysely";
import { loadSourceConfig } from "../../src/config.ts";
import type { Database } from "../../src/db/schema.ts";
import { silentLogger } from "../../src/log.ts";
import type { SnapshotContext } from "../../src/migration/read/snapshot.ts";
import { createProgress } from "../../src/migration/steer/progress.ts";
import type { PlatformClient } from "../../src/platform/index.ts";
import { EXPECTED_FINDINGS } from "./crafted-dataset.ts";

/** A progress display that shows nothing, for the source pass. */
export const QUIET = createProgress({ enabled: false, logger: silentLogger });
/** A listing told nothing of the platform's size or latency. */
export const NO_HINT = { expectedItems: null, latencyMs: null };

/** Inserts run `runId` (running) and returns its snapshot context, listing `pageSize` a page. */
export async function startStreamRun(
  db: Kysely<Database>,
  client: PlatformClient,
  runId: string,
  options: { readonly pageSize: number; readonly serialDatabase?: boolean },
): Promise<SnapshotContext> {
  await sql`insert into controls_migration.runs (id, mode, status, tool_version, host, pid)
    values (${runId}, 'reconcile', 'running', 'test', 'here', 1)`.execute(db);
  return {
    db,
    client,
    source: loadSourceConfig({}, {}),
    runId,
    logger: silentLogger,
    progress: createProgress({ enabled: false, logger: silentLogger }),
    listing: { rate: 10_000, maxParallel: 2, retryBaseMs: 10, pageSize: options.pageSize },
    ...(options.serialDatabase === undefined ? {} : { serialDatabase: options.serialDatabase }),
  };
}

/** The run's findings, every column that says what was found, in a fixed order. */
export async function findingsOf(
  db: Kysely<Database>,
  runId: string,
): Promise<Record<string, unknown>[]> {
  const r = await sql<Record<string, unknown>>`
    select identity_id, finding, user_disabled, admin_disabled, expected_type,
           expected_set_by, expected_is_overridable, observed_control_id, observed_set_by,
           observed_is_overridable, other_active_controls, detail, prunable
    from controls_migration.findings where run_id = ${runId}
    order by identity_id nulls first, finding, observed_control_id nulls first`.execute(db);
  return r.rows;
}

/** The run's journal, each action with its finding, in a fixed order. */
export async function actionsOf(
  db: Kysely<Database>,
  runId: string,
): Promise<Record<string, unknown>[]> {
  const r = await sql<Record<string, unknown>>`
    select a.identity_id, a.action, a.control_type, a.control_key, a.status, f.finding
    from controls_migration.actions a
    left join controls_migration.findings f on f.id = a.finding_id
    where a.run_id = ${runId} order by a.identity_id, a.action, a.control_key`.execute(db);
  return r.rows;
}

/** Findings counted by kind, every kind of the crafted dataset present (0 when none). */
export function tallyFindings(rows: readonly Record<string, unknown>[]): Record<string, number> {
  const t: Record<string, number> = Object.fromEntries(
    Object.keys(EXPECTED_FINDINGS).map((k) => [k, 0]),
  );
  for (const r of rows) t[r.finding as string] = (t[r.finding as string] ?? 0) + 1;
  return t;
}
