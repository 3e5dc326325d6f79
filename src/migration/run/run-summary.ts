/**
 * What a finished run amounts to: its tally (findings, actions) read from the database, and the
 * summary (summary.json's content) built from it. No policy here: exit-code.ts decides the exit
 * code and status, the pipeline closes the run.
 */
import type { Kysely } from "kysely";
import { countFindings } from "../../db/journal/finding-queries.ts";
import { countActionsByStatus, countActionsPerStatus } from "../../db/journal/journal-queries.ts";
import {
  countForcedContested,
  countOutcomesByFinding,
  type FindingOutcomeCount,
} from "../../db/journal/outcome-queries.ts";
import { threeWayCells } from "../../db/journal/three-way-queries.ts";
import type { ActionStatus, Database, RunMode } from "../../db/schema.ts";
import type { ClientMetrics } from "../../platform/index.ts";
import type { EndpointFigures, RunSummary } from "../../reports/summary.ts";
import { type ThreeWayCellFigure, threeWaySummary } from "../../reports/three-way-section.ts";
import { FINDING_KINDS } from "../classify/classify.ts";
import type { SourceCounts } from "../read/source-stage.ts";
import { isClientWork, type RunTally } from "./exit-code.ts";

/** A run's findings and actions once its work is over. */
export interface RunFigures {
  /** Every finding kind, 0 when absent. */
  readonly findings: Record<string, number>;
  /** Per `status:outcome` (summary.json's documented `outcomes` key). */
  readonly outcomes: Record<string, number>;
  readonly actions: Record<ActionStatus, number>;
  /** The actions per finding kind they act on, by status and outcome. */
  readonly byFinding: readonly FindingOutcomeCount[];
  /** Findings per three-way cell (flag, L, P, finding); empty when no legacy field was read. */
  readonly threeWay?: readonly ThreeWayCellFigure[];
  /** Contested identities written anyway this run (`--force-contested`). */
  readonly forcedContested?: number;
}

/**
 * Reads a run's findings and journal counts.
 *
 * @example
 *   const figures = await readRunFigures(db, runId);
 *   figures.actions.succeeded // 1000
 */
export async function readRunFigures(db: Kysely<Database>, runId: string): Promise<RunFigures> {
  const zero = Object.fromEntries(FINDING_KINDS.map((k) => [k, 0])) as Record<string, number>;
  return {
    findings: { ...zero, ...(await countFindings(db, runId)) },
    outcomes: await countActionsByStatus(db, runId),
    actions: await countActionsPerStatus(db, runId),
    byFinding: await countOutcomesByFinding(db, runId),
    threeWay: (await threeWayCells(db, runId)).map(({ n, ...c }) => ({ ...c, count: n })),
    forcedContested: await countForcedContested(db, runId),
  };
}

/**
 * How an action's end reads in a summary: the outcome when it succeeded (`created`), the status
 * with the reason otherwise (`failed (conflict)`, `skipped (not_run_limit)`, `ambiguous`).
 */
export function outcomeLabel(status: ActionStatus, outcome: string | null): string {
  if (status === "succeeded") return outcome ?? "done";
  // No failure (README "Exit codes"): the identity is not on the platform; said so everywhere.
  if (status === "failed" && outcome === "identity_not_found") return "not on the platform (404)";
  if (status === "failed" || status === "skipped")
    return outcome ? `${status} (${outcome})` : status;
  return status.replace("_", " ");
}

/** Findings left after the run's succeeded actions, and what the actions did, per kind. */
export function findingResolution(f: RunFigures): {
  findings_left: Record<string, number>;
  actions_by_finding: Record<string, Record<string, number>>;
} {
  const left = { ...f.findings };
  const byFinding: Record<string, Record<string, number>> = {};
  for (const c of f.byFinding) {
    if (c.status === "succeeded") left[c.finding] = Math.max(0, (left[c.finding] ?? 0) - c.n);
    byFinding[c.finding] ??= {};
    const labels = byFinding[c.finding]!;
    const label = outcomeLabel(c.status, c.outcome);
    labels[label] = (labels[label] ?? 0) + c.n;
  }
  // A contested identity written anyway is told once, as forced, and is not left (issue 50).
  const forced = f.forcedContested ?? 0;
  if (forced > 0) {
    left.contested = Math.max(0, (left.contested ?? 0) - forced);
    byFinding.contested = { ...byFinding.contested, "forced (--force-contested)": forced };
  }
  return { findings_left: left, actions_by_finding: byFinding };
}

/** The exit-code policy's input, from a run's figures. */
export function tallyOf(mode: RunMode, interrupted: boolean, f: RunFigures): RunTally {
  const reportable = Object.entries(f.findings)
    .filter(([kind]) => isClientWork(kind))
    .reduce((n, [, v]) => n + v, 0);
  // A create sent for a platform-owned finding (--no-wait-for-platform) resolves no client work.
  const platformOwnedDone = f.byFinding
    .filter((c) => c.status === "succeeded" && !isClientWork(c.finding))
    .reduce((n, c) => n + c.n, 0);
  return {
    mode,
    interrupted,
    reportableFindings: reportable,
    succeededActions: f.actions.succeeded - platformOwnedDone,
    // A create answered 404 found an identity the platform does not know: a report-only finding
    // learnt late (how the filtered strategy checks existence), not an action to retry.
    failedActions: f.actions.failed - (f.outcomes["failed:identity_not_found"] ?? 0),
    unsettledActions: f.actions.pending + f.actions.in_flight + f.actions.ambiguous,
    readFailed: f.findings.read_failed ?? 0,
    anyFindingsLeft: Object.entries(findingResolution(f).findings_left)
      .filter(([kind]) => kind !== "in_sync")
      .reduce((n, [, v]) => n + v, 0),
  };
}

/** Per-endpoint request figures of the platform client, the token endpoint included. */
export function requestFigures(m: ClientMetrics): Record<string, EndpointFigures> {
  const out: Record<string, EndpointFigures> = {};
  for (const [k, v] of Object.entries(m.endpoints)) {
    out[k] = {
      count: v.requests,
      retries: v.retries,
      rate_limited: v.rateLimited,
      ambiguous: v.ambiguous,
      anomalies: v.anomalies,
      statuses: v.statuses,
      p50_ms: v.latencyMs.p50,
      p95_ms: v.latencyMs.p95,
    };
  }
  out["POST /oauth2/token"] = {
    count: m.token.requests,
    retries: 0,
    rate_limited: 0,
    ambiguous: 0,
    anomalies: 0,
    statuses: {},
    p50_ms: null,
    p95_ms: null,
  };
  return out;
}

export interface SummaryInput {
  readonly runId: string;
  readonly tally: RunTally;
  readonly status: string;
  readonly exitCode: number;
  readonly startedMs: number;
  readonly finishedMs: number;
  readonly strategy: string | null;
  /** How the platform's state was read (summary.json `platform_state`). */
  readonly platformState?: RunSummary["platform_state"];
  readonly source: SourceCounts;
  /** The source relation as resolved at the run's start (`schema.table`); null: not recorded. */
  readonly sourceRelation?: string | null;
  readonly figures: RunFigures;
  readonly metrics: ClientMetrics;
  readonly changes: RunSummary["changes"];
  /** What the run read of its candidates (summary.json `coverage`). */
  readonly coverage?: RunSummary["coverage"];
  /** The books' first gap, when they do not balance. */
  readonly ledgerError?: RunSummary["ledger_error"];
}

const perSecond = (n: number, seconds: number) =>
  Math.round((n / Math.max(seconds, 0.001)) * 10) / 10;

/**
 * summary.json's content (all but `reports`, which the report writer adds).
 *
 * @example
 *   const summary = buildRunSummary({ runId, tally, status, exitCode, ... });
 */
export function buildRunSummary(i: SummaryInput): Omit<RunSummary, "reports"> {
  const duration = (i.finishedMs - i.startedMs) / 1000;
  const actionsDone = i.figures.actions.succeeded + i.figures.actions.failed;
  return {
    run_id: i.runId,
    mode: i.tally.mode,
    status: i.status,
    started_at: new Date(i.startedMs).toISOString(),
    finished_at: new Date(i.finishedMs).toISOString(),
    duration_s: Math.round(duration * 10) / 10,
    strategy: i.strategy,
    platform_state: i.platformState ?? null,
    source: {
      ...(i.sourceRelation ? { relation: i.sourceRelation } : {}),
      rows_read: i.source.rowsRead,
      candidates: i.source.candidates,
      anomalies: i.source.anomalies,
    },
    ...(i.coverage ? { coverage: i.coverage } : {}),
    findings: i.figures.findings,
    three_way: threeWaySummary(i.figures.threeWay ?? []),
    ...findingResolution(i.figures),
    outcomes: i.figures.outcomes,
    requests: requestFigures(i.metrics),
    throughput: {
      identities_per_s: perSecond(i.source.rowsRead, duration),
      actions_per_s: perSecond(actionsDone, duration),
    },
    changes: i.changes,
    exit_code: i.exitCode,
    ...(i.ledgerError ? { ledger_error: i.ledgerError } : {}),
  };
}
