/**
 * What changed in the world since the previous writing run (apply or reconcile on the same
 * platform and source), apart from the tool's own writes; and what history alone can tell about
 * this run's findings: orphaned own controls, identities remembered unknown to the platform,
 * contested identities. Runs once a new writer's read is complete, before anything is confirmed.
 */
import type { Kysely } from "kysely";
import { countCoverage } from "../../db/journal/coverage-queries.ts";
import { countCarried } from "../../db/journal/incremental-queries.ts";
import type { LedgerCounts } from "../../db/journal/ledger-queries.ts";
import { getRun } from "../../db/journal/run-queries.ts";
import { analyzeRunTables } from "../../db/journal/snapshot-queries.ts";
import { findingDelta } from "../../db/report-queries/finding-delta-queries.ts";
import { storePlatformFieldDelta } from "../../db/report-queries/platform-field-delta-queries.ts";
import {
  rowsOnlyThenPage,
  storeFlagDelta,
} from "../../db/report-queries/source-flag-delta-queries.ts";
import {
  countWorldChanges,
  type DeltaRuns,
  insertWorldChanges,
  type Lineage,
  type NewWorldChange,
  previousWritingRun,
  storeControlDelta,
} from "../../db/report-queries/world-delta-queries.ts";
import {
  journalOrphanDeletes,
  markContested,
  markOrphans,
  notFoundCreatesToFindings,
  rememberNotFound,
} from "../../db/report-queries/world-finding-queries.ts";
import { type Database, type RunMode, WORLD_CHANGE_KINDS } from "../../db/schema.ts";
import { refreshSourceIdSet, sourceIdSetOf } from "../../db/source/source-id-set-queries.ts";
import { lookupSourceRows } from "../../db/source/source-reader.ts";
import type { RunSummary } from "../../reports/summary.ts";
import { readMarkedThenUnkept } from "../read/identity-reads.ts";
import { coverageOf, type SinceLastCoverage } from "./coverage.ts";
import { CLIENT_WORK_KINDS, type RunTally } from "./exit-code.ts";
import type { PipelineDeps, PipelineOptions } from "./pipeline-context.ts";
import { platformKey } from "./run-binding.ts";
import { startLedgerCount } from "./run-ledger.ts";
import { findingResolution, type RunFigures, readRunFigures, tallyOf } from "./run-summary.ts";

const PAGE = 1000;
const LISTINGS = new Set(["bulk", "filtered"]);

/**
 * The platform and source a run is bound to: the platform's key (API URL, token URL and client
 * id, as `runs.platform_key` records it), so that two platforms of one API URL never share a
 * previous run or a source id set; the source as `runs.options` records it.
 */
export function lineageOf(options: PipelineOptions): Lineage {
  return { platformKey: platformKey(options.platform), source: { ...options.source } };
}

/**
 * Stores the world's delta of a new writing run, records the source's ids as it read them (the next
 * run's evidence of rows added), and applies what history says to its findings and journal: 404 memory, orphans (journaled for deletion with `--prune-orphans`), contested
 * identities (their writes skipped unless `--force-contested`). Returns what it did, for the log.
 *
 * @example
 *   await assessWorld(deps, options, runId, "bulk");
 */
export async function assessWorld(
  deps: PipelineDeps,
  options: PipelineOptions,
  runId: string,
  strategy: string,
): Promise<void> {
  const db = deps.handle.db;
  const lineage = lineageOf(options);
  const since = await previousWritingRun(db, runId, lineage);
  if (since) {
    const base = await lineageBase(db, since);
    const d: DeltaRuns = {
      runId,
      sinceId: base.id,
      runListed: LISTINGS.has(strategy),
      sinceListed: LISTINGS.has(base.strategy ?? ""),
      sinceBulk: base.strategy === "bulk",
    };
    // The delta joins this run's snapshot with the earlier one's: the planner must know their
    // sizes (PGlite has no autovacuum), or it nests loops over them, quadratic in the identities.
    await analyzeRunTables(db, "snapshot");
    await storeControlDelta(db, d);
    await storeFlagDelta(db, d, await sourceIdSetOf(db, lineage, since.id));
    if (strategy === "bulk") {
      const { client, logger, signal } = deps;
      await readMarkedThenUnkept({ db, client, runId, logger, signal }, base.id);
    }
    await storePlatformFieldDelta(db, d);
    await storeRowsGone(deps, options, d);
    const remembered = await rememberNotFound(db, runId, since.id);
    if (remembered > 0) {
      deps.logger.info(
        `${remembered} identit${remembered === 1 ? "y" : "ies"} answered 404 in run ${since.id} and not listed since: not sent again`,
      );
    }
  }
  // The source's ids as this run read them, for the next run's source_row_added.
  await refreshSourceIdSet(db, lineage, runId, options.source);
  const orphans = await markOrphans(db, runId);
  const prune = options.mode === "reconcile" && options.run.pruneOrphans;
  if (orphans > 0) {
    if (prune) await journalOrphanDeletes(db, runId);
    deps.logger.info(
      `${orphans} control${orphans === 1 ? "" : "s"} this tool created on identities whose source row is gone (orphaned_own_control)${prune ? ": deleting them (--prune-orphans)" : "; --prune-orphans deletes them"}`,
    );
  }
  const contested = await markContested(db, runId, lineage, options.run.forceContested);
  if (contested > 0) {
    deps.logger.warn(
      `${contested} contested identit${contested === 1 ? "y" : "ies"}: outside changes undid the tool's writes twice or more; ${options.run.forceContested ? "written anyway (--force-contested)" : "left as they are until --force-contested"}`,
    );
  }
}

/**
 * The state the outside changes are weighed against (issue 50 §5): the previous writing run's,
 * or, when it was an `apply --plan` (which read only the plan's creates again), its plan's
 * observation; the writes of every run since the base (the apply's included) are applied on top.
 */
async function lineageBase(
  db: Kysely<Database>,
  since: {
    readonly id: string;
    readonly strategy: string | null;
    readonly parent_run_id: string | null;
  },
): Promise<{ readonly id: string; readonly strategy: string | null }> {
  if (
    !since.parent_run_id ||
    LISTINGS.has(since.strategy ?? "") ||
    since.strategy === "per-identity"
  )
    return since;
  const plan = await getRun(db, since.parent_run_id);
  return plan?.mode === "plan" && plan.status === "completed" ? plan : since;
}

/**
 * Rows the previous run held and this run did not store: looked up again in the source, a flagged
 * row that is gone is `source_row_removed`, a row still there had its flags cleared.
 */
async function storeRowsGone(
  deps: PipelineDeps,
  options: PipelineOptions,
  d: DeltaRuns,
): Promise<void> {
  const db = deps.handle.db;
  let after: string | null = null;
  for (;;) {
    const page = await rowsOnlyThenPage(db, d, after, PAGE);
    if (page.length === 0) return;
    after = page[page.length - 1]?.identity_id ?? null;
    const found = await lookupSourceRows(
      db,
      options.source,
      page.map((r) => r.identity_id),
    );
    const out: NewWorldChange[] = [];
    for (const then of page) {
      const now = found.get(then.identity_id)?.find((r) => r.valid);
      if (!found.has(then.identity_id)) {
        // A clean row gone is nothing to migrate (as a clean row added is no source_row_added),
        // though the earlier run looked it up for a finding of its platform side.
        if (!then.u && !then.a) continue;
        out.push({
          identity_id: then.identity_id,
          kind: "source_row_removed",
          set_by: null,
          detail: `user_disabled ${then.u}, admin_disabled ${then.a} when last read`,
        });
        continue;
      }
      if (!now) continue;
      if (then.u && now.userDisabled === false) out.push(cleared(then.identity_id, "CLIENT"));
      if (then.a && now.adminDisabled === false) out.push(cleared(then.identity_id, "SERVICE"));
    }
    await insertWorldChanges(db, d, out);
  }
}

const cleared = (identityId: string, owner: "CLIENT" | "SERVICE"): NewWorldChange => ({
  identity_id: identityId,
  kind: "flag_cleared",
  set_by: owner,
  detail: owner === "CLIENT" ? "user_disabled" : "admin_disabled",
});

/**
 * summary.json's `changes` of a writing run: the outside changes by kind, the undone writes, and
 * the findings new and resolved since the previous writing run's state after its actions. Null for
 * plans and reverts.
 *
 * @example
 *   const changes = await worldChanges(db, runId, "reconcile", lineage, { reportable, clientWork });
 */
export async function worldChanges(
  db: Kysely<Database>,
  runId: string,
  mode: RunMode,
  lineage: Lineage,
  left: { readonly reportable: number; readonly clientWork: number },
): Promise<RunSummary["changes"]> {
  if (mode !== "apply" && mode !== "reconcile") return null;
  const since = await previousWritingRun(db, runId, lineage);
  const { byKind, undone } = await countWorldChanges(db, runId);
  const outside = Object.fromEntries(WORLD_CHANGE_KINDS.map((k) => [k, byKind[k] ?? 0]));
  const outsideTotal = Object.values(outside).reduce((n, v) => n + v, 0);
  const delta = since
    ? await findingDelta(db, runId, since.id, CLIENT_WORK_KINDS)
    : {
        newFindings: left.reportable,
        resolvedFindings: 0,
        newClientWork: left.clientWork,
        changedFindings: 0,
        comparedIdentities: 0,
        lastSeen: { findings: 0, by_run: {} },
      };
  return {
    since_run_id: since?.id ?? null,
    outside,
    outside_total: outsideTotal,
    undone_total: undone,
    new_findings: delta.newFindings,
    resolved_findings: delta.resolvedFindings,
    new_client_work: delta.newClientWork,
    changed_findings: delta.changedFindings,
    compared_identities: delta.comparedIdentities,
    last_seen: delta.lastSeen,
  };
}

/**
 * A finished run's figures and the exit policy's input, with its `changes`: creates answered 404
 * are first recorded as `identity_not_found` (one finding per fact, whatever the strategy).
 *
 * @example
 *   const { figures, tally, changes, coverage, ledger } = await finalTally(deps, options, run);
 */
export async function finalTally(
  deps: PipelineDeps,
  options: PipelineOptions,
  run: {
    readonly id: string;
    readonly strategy?: string | null;
    readonly platformState?: {
      readonly listing: { readonly omitted?: number } | null;
      readonly since_last?: SinceLastCoverage;
    };
  },
): Promise<{
  figures: RunFigures;
  tally: RunTally;
  changes: RunSummary["changes"];
  coverage: RunSummary["coverage"];
  ledger: Promise<LedgerCounts>;
}> {
  const db = deps.handle.db;
  const runId = run.id;
  if (options.mode !== "plan") await notFoundCreatesToFindings(db, runId);
  // The run's tables are final from here: its books are counted beside what follows.
  const ledger = startLedgerCount(db, runId);
  // Coverage reads the source rows, the snapshot and read_failed findings, which nothing below
  // changes: on PostgreSQL it runs on its own connection beside the figures and the delta (a
  // second on a 1,000,000-identity plan's path from the last page to the exit).
  const counted = countCoverage(db, runId);
  counted.catch(() => {}); // awaited below; a failure surfaces there
  const figures = await readRunFigures(db, runId);
  const base = tallyOf(options.mode, deps.signal?.aborted === true, figures);
  const left = findingResolution(figures).findings_left;
  const clientWork = CLIENT_WORK_KINDS.reduce((n, k) => n + (left[k] ?? 0), 0);
  const changes = await worldChanges(db, runId, options.mode, lineageOf(options), {
    reportable: base.reportableFindings,
    clientWork,
  });
  const tally: RunTally = {
    ...base,
    exitOn: options.run.exitOn,
    clientWorkLeft: clientWork,
    outsideChanges: changes?.outside_total ?? 0,
    newClientWork: changes?.new_client_work ?? 0,
  };
  const since = run.platformState?.since_last;
  const sinceLast =
    since?.mode === "incremental" ? { ...since, carried: await countCarried(db, runId) } : since;
  const coverage = coverageOf(await counted, run.strategy ?? null, sinceLast);
  return { figures, tally, changes, coverage, ledger };
}
