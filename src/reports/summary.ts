import { join } from "node:path";
import { escapeInvisible } from "../visible-text.ts";
import { runNotes } from "./run-notes.ts";
import type { ThreeWaySummary } from "./three-way-section.ts";

export interface EndpointFigures {
  readonly count: number;
  readonly retries: number;
  readonly rate_limited: number;
  readonly ambiguous: number;
  /** Items the platform served twice within one page (kept once; platform anomalies). */
  readonly anomalies: number;
  /** Exchanges by HTTP status (`"200"`), or by failure kind when no answer came (`"timeout"`). */
  readonly statuses: Record<string, number>;
  readonly p50_ms: number | null;
  readonly p95_ms: number | null;
}

/** One pause, continue, rate change or hold, as summary.json lists it. */
export interface ControlEventFigure {
  readonly at: string;
  /** `user@host` (the run's own process for a throttle-file or time-window hold). */
  readonly who: string;
  readonly pid: number | null;
  /**
   * pause, continue, set_rate, throttle_on, throttle_off, window_closed, window_open; and
   * source_reread (creates cancelled as `skipped:source_changed`, flags newly set in the source).
   */
  readonly event: string;
  readonly rate: number | null;
  readonly detail: string | null;
}

/** What a revert did beyond its journal counts. */
export interface RevertFigures {
  readonly of_run_id: string;
  readonly dry_run: boolean;
  /** Controls of the reverted run's creating it deletes (a dry run: would delete); diff.csv rows. */
  readonly deletes?: number;
  /** Controls the reverted run pruned that it creates again (a dry run: would create). */
  readonly creates?: number;
  /** The pruned controls created again: a new control each, with a new id. */
  readonly recreated: readonly {
    readonly identity_id: string;
    readonly deleted_control_id: string;
    readonly new_control_id: string;
  }[];
}

/** summary.json's `coverage`. */
export interface CoverageFigures {
  readonly candidates: number;
  readonly candidates_read: number;
  readonly candidates_unread: number;
  readonly read_failed: number;
  readonly not_looked_for: readonly string[];
  /** How each candidate was observed (absent from summaries written before it). */
  readonly observed_by?: {
    readonly complete_listing: number;
    readonly filtered_listing: number;
    readonly read_by_id: number;
    readonly not_read: number;
    readonly read_failed: number;
    /** Candidates an incremental run did not read and carried as last observed (issue 55). */
    readonly carried?: number;
  };
  /**
   * `--since-last` (issue 55): `incremental` for a run that read only what changed since `since`
   * (the complete run `since_run_id`'s start less the margin) and carried `carried` identities
   * from run `view_run_id`; `complete` for a `--since-last` run that read everything, and why.
   */
  readonly mode?: "complete" | "incremental";
  readonly reason?: string;
  readonly since?: string;
  readonly since_run_id?: string;
  readonly view_run_id?: string;
  readonly carried?: number;
}

/** summary.json's `ledger_error`: where a run's books did not balance. */
export interface LedgerErrorFigure {
  readonly stage: string;
  readonly what: string;
  readonly expected: number;
  readonly actual: number;
  readonly message: string;
}

/** summary.json; the key set is part of the tool's interface (README "Reports"). */
export interface RunSummary {
  readonly run_id: string;
  readonly mode: "plan" | "apply" | "reconcile" | "revert";
  readonly status: string;
  readonly started_at: string;
  readonly finished_at: string;
  readonly duration_s: number;
  readonly strategy: string | null;
  /**
   * How the platform's state was read (strategy, why, how existence is established, what a
   * listing read); null for runs that re-verify a plan or resumed one without it.
   */
  readonly platform_state?: {
    readonly strategy: string;
    readonly reason: string;
    readonly existence: string;
    readonly listing: object | null;
    /** `--since-last`: incremental or complete, and why (issue 55). */
    readonly since_last?: object;
  } | null;
  readonly source: {
    /** The source relation as the database resolved it at the run's start (`schema.table`). */
    readonly relation?: string;
    readonly rows_read: number;
    readonly candidates: number;
    readonly anomalies: number;
  };
  readonly findings: Record<string, number>;
  /**
   * What the run read of the candidates it needed (issue 50): `candidates_unread` counts read
   * failures too; `not_looked_for`, the finding kinds its strategy cannot see (shown "not looked
   * for", never 0). Absent from summaries written before it.
   */
  readonly coverage?: CoverageFigures | null;
  /** The three-way table (issue 27): counts per cell and what the platform will still do. */
  readonly three_way?: ThreeWaySummary | null;
  /**
   * Findings the run's own succeeded actions did not resolve: what is left after it (equal to
   * `findings` for a plan). Absent from summaries written before 0.1.0's run lifecycle work.
   */
  readonly findings_left?: Record<string, number>;
  /** What the run did per finding kind: outcome label ("created", "failed (conflict)") → count. */
  readonly actions_by_finding?: Record<string, Record<string, number>>;
  readonly outcomes: Record<string, number>;
  readonly requests: Record<string, EndpointFigures>;
  readonly throughput: { readonly identities_per_s: number; readonly actions_per_s: number };
  /** apply and reconcile: the world and the findings since the previous writing run. */
  readonly changes: {
    /** The previous apply or reconcile on the same platform and source; null: none. */
    readonly since_run_id: string | null;
    /** Outside changes (not written by the tool) by kind, every kind present. */
    readonly outside: Record<string, number>;
    readonly outside_total: number;
    /** Outside changes that reversed a write of the tool (our control removed, our prune re-added). */
    readonly undone_total: number;
    /** Against the previous writing run's findings left after its actions. */
    readonly new_findings: number;
    readonly resolved_findings: number;
    /** New findings of client work that this run did not settle (`--exit-on changes`). */
    readonly new_client_work: number;
    /**
     * Identities observed by this run and by the one compared with: the delta's ground (issue
     * 50). An identity one of them did not read is neither new nor resolved.
     */
    readonly compared_identities?: number;
    /** Findings whose kind held and whose owner changed: neither new nor resolved. */
    readonly changed_findings?: number;
    /**
     * Findings of identities this run did not observe, kept as last seen by an earlier run: in
     * all, and by the run that last observed them. Neither new nor resolved.
     */
    readonly last_seen?: { readonly findings: number; readonly by_run: Record<string, number> };
  } | null;
  readonly exit_code: number;
  /**
   * The books' first gap when they do not balance (exit 4): the stage, what was weighed, both
   * counts and the message; absent when they balance.
   */
  readonly ledger_error?: LedgerErrorFigure | null;
  /** Every pause, continue and rate change of the run, and every hold, oldest first. */
  readonly control_events?: readonly ControlEventFigure[];
  /** A revert: the run it reverts, and the controls it re-created (each has a new id). */
  readonly revert?: RevertFigures;
  readonly reports: { readonly dir: string; readonly diff_csv: string; readonly rows: number };
}

/**
 * ", 3 changed, over 9,843 identities both runs observed; findings of identities this run did
 * not read: 237 last seen by run X" (empty for summaries written before issue 50 counted them).
 */
export function comparedNote(c: NonNullable<RunSummary["changes"]>): string {
  if (c.compared_identities === undefined) return "";
  const changed = c.changed_findings ? `, ${c.changed_findings} changed` : "";
  const n = c.compared_identities;
  const seen = Object.entries(c.last_seen?.by_run ?? {})
    .map(([run, k]) => `${k} last seen by run ${run}`)
    .join(", ");
  const kept = seen ? `; findings of identities this run did not read: ${seen}` : "";
  return `${changed}, over ${n} identit${n === 1 ? "y" : "ies"} both runs observed${kept}`;
}

/** `would delete 117 controls run X created, would re-create 3 it pruned` (a dry run's words). */
export function revertLine(r: RevertFigures): string {
  const verb = (word: string) => (r.dry_run ? `would ${word}` : `${word}s`);
  return `  ${verb("delete")} ${r.deletes ?? 0} controls run ${r.of_run_id} created, ${verb("re-create")} ${r.creates ?? 0} it pruned`;
}

/** A revert that sent writes: what they came to (`outcomes: 115 succeeded:deleted, ...`). */
function revertOutcomes(s: RunSummary): string[] {
  const done = Object.entries(s.outcomes).filter(([k]) => k !== "skipped:dry_run");
  return done.length === 0 ? [] : [`  outcomes: ${done.map(([k, n]) => `${n} ${k}`).join(", ")}`];
}

/**
 * A compact, aligned table for the terminal (stderr). A writer's rows say what is left after its
 * actions and what they did (`missing_client_control  0 left  1000 created`); a plan's rows are
 * the counts found.
 */
export function renderSummaryTable(s: RunSummary): string {
  const writer = s.mode !== "plan" && s.findings_left !== undefined;
  const kinds = Object.keys(s.findings).filter(
    (k) => (s.findings[k] ?? 0) > 0 || (s.findings_left?.[k] ?? 0) > 0,
  );
  const rows = kinds.map((k) => {
    const done = Object.entries(s.actions_by_finding?.[k] ?? {})
      .map(([label, n]) => `${n} ${label}`)
      .join(", ");
    const count = writer ? (s.findings_left?.[k] ?? 0) : (s.findings[k] ?? 0);
    return { k, count: String(count), done };
  });
  const nameWidth = Math.max(0, ...rows.map((r) => r.k.length));
  const countWidth = Math.max(0, ...rows.map((r) => r.count.length));
  const lines = [
    `${s.mode} ${s.run_id}: ${s.status} in ${s.duration_s.toFixed(1)} s (exit ${s.exit_code})`,
    `  source${s.source.relation ? ` ${s.source.relation}` : ""}: ${s.source.rows_read} rows read, ${s.source.candidates} candidates, ${s.source.anomalies} anomalies`,
  ];
  for (const r of rows) {
    // in_sync is no work left over: it keeps its plain count.
    const count = `${r.count.padStart(countWidth)}${writer && r.k !== "in_sync" ? " left" : ""}`;
    lines.push(`  ${r.k.padEnd(nameWidth)}  ${count}${r.done ? `  ${r.done}` : ""}`.trimEnd());
  }
  lines.splice(2, 0, ...runNotes(s).map((note) => `  ${note}`));
  if (s.revert) lines.splice(1, 1, revertLine(s.revert), ...revertOutcomes(s));
  else if (rows.length === 0) lines.push("  no findings");
  const c = s.changes;
  if (c?.since_run_id) {
    lines.push(
      `  since ${c.since_run_id}: ${c.outside_total} outside change${c.outside_total === 1 ? "" : "s"} (${c.undone_total} undoing the tool's writes), ${c.new_findings} new, ${c.resolved_findings} resolved${comparedNote(c)}`,
    );
  }
  lines.push(`  report: ${s.reports.dir}`, `  open: ${join(s.reports.dir, "report.html")}`);
  return escapeInvisible(lines.join("\n"), { keepNewlines: true });
}
