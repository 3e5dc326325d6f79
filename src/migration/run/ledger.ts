/**
 * A run's ledger: the books that must balance before a run may close `completed` and exit 0.
 * Pure: it reads the counts of the run's tables (`db/journal/ledger-queries.ts`) and what its
 * report states, and names the first stage whose two counts differ.
 *
 * - findings: every valid source candidate has a finding, and no finding is stored twice;
 * - journal: every finding that calls for an action has exactly one action, and no action is
 *   journaled without one;
 * - report: the report's counts of findings and actions equal the journal's.
 *
 * (Every action ends in exactly one outcome: an action's status is one column, and one still
 * pending, in flight or in doubt is unsettled, which the exit-code policy already refuses.)
 *
 * @example
 *   const gap = checkLedger(counts, { journalCreates: true, journalDeletes: false },
 *     { findings: 117, actions: 117 });
 *   if (gap) throw new LedgerError(gap);
 */
import type { LedgerCounts } from "../../db/journal/ledger-queries.ts";

/** What the run was asked to journal. */
export interface LedgerScope {
  readonly journalCreates: boolean;
  /** `--prune`: a delete for each prunable finding. */
  readonly journalDeletes: boolean;
  /** `--prune-orphans`: a delete for each orphaned own control (absent: none). */
  readonly pruneOrphans?: boolean;
}

/** What the run's report states (summary.json's findings and outcomes, summed). */
export interface ReportedCounts {
  readonly findings: number;
  readonly actions: number;
}

/** The first place the books do not balance: its stage, what it should hold, what it holds. */
export interface LedgerGap {
  readonly stage: "findings" | "journal" | "report";
  readonly what: string;
  readonly expected: number;
  readonly actual: number;
  readonly message: string;
}

const gap = (
  stage: LedgerGap["stage"],
  what: string,
  expected: number,
  actual: number,
  detail: string,
): LedgerGap => ({
  stage,
  what,
  expected,
  actual,
  message: `The run's books do not balance at the ${stage} stage: ${what}: expected ${expected}, counted ${actual}. ${detail}`,
});

const RERUN =
  "Nothing is lost: run the same command again (a new run reads both sides afresh); the report lists what was found.";

/**
 * The first gap in a run's books, or null when they balance.
 *
 * @example
 *   checkLedger({ ...counts, candidatesWithoutFinding: 1483 }, scope, reported)
 *   // { stage: "findings", what: "valid source candidates with a finding", expected: 2500, actual: 1017, ... }
 */
export function checkLedger(
  c: LedgerCounts,
  scope: LedgerScope,
  reported: ReportedCounts,
): LedgerGap | null {
  if (c.candidatesWithoutFinding > 0) {
    return gap(
      "findings",
      "valid source candidates with a finding",
      c.candidates,
      c.candidates - c.candidatesWithoutFinding,
      `${c.candidatesWithoutFinding} candidates were never classified. ${RERUN}`,
    );
  }
  if (c.repeatedFindings > 0) {
    return gap(
      "findings",
      "findings stored once each",
      c.findings - c.repeatedFindings,
      c.findings,
      `${c.repeatedFindings} findings were stored twice. ${RERUN}`,
    );
  }
  const creates = scope.journalCreates ? c.createFindings : 0;
  if (c.createActions !== creates) {
    return gap(
      "journal",
      "create actions for missing_client_control findings",
      creates,
      c.createActions,
      RERUN,
    );
  }
  const deletes =
    (scope.journalDeletes ? c.deleteFindings : 0) + (scope.pruneOrphans ? c.orphanFindings : 0);
  if (c.deleteActions !== deletes) {
    const what = scope.pruneOrphans
      ? "delete actions for prunable findings and orphaned own controls"
      : "delete actions for prunable findings";
    return gap("journal", what, deletes, c.deleteActions, RERUN);
  }
  if (c.findingsActedTwice > 0 || c.actions !== c.createActions + c.deleteActions) {
    return gap(
      "journal",
      "actions, each for one finding",
      c.createActions + c.deleteActions - c.findingsActedTwice,
      c.actions,
      RERUN,
    );
  }
  if (reported.findings !== c.findings) {
    return gap("report", "findings in the report", c.findings, reported.findings, RERUN);
  }
  if (reported.actions !== c.actions) {
    return gap("report", "actions in the report", c.actions, reported.actions, RERUN);
  }
  return null;
}
