/**
 * The exit-code policy of plan, apply and reconcile, and the status a run closes with. Pure: it
 * reads a tally of the finished run and nothing else. README "Exit codes" documents it.
 */
import type { RunMode } from "../db/schema.ts";
import { ExitCode } from "../errors.ts";

/**
 * Findings that are the platform's work, not the client's: the platform's own migration will
 * resolve them. They never make a run exit 2 on their own (README "Exit codes"). Every other
 * finding but `in_sync` is the client's to act on or to report.
 */
export const PLATFORM_OWNED_FINDINGS: ReadonlySet<string> = new Set([
  "awaiting_platform_migration",
]);

/**
 * Whether a finding is work left for the client (to act on or to report).
 *
 * @example
 *   isClientWork("awaiting_platform_migration") // false
 *   isClientWork("platform_will_restrict") // true
 */
export function isClientWork(finding: string): boolean {
  return finding !== "in_sync" && !PLATFORM_OWNED_FINDINGS.has(finding);
}

/** What the policy looks at, counted once a run's work is over. */
export interface RunTally {
  readonly mode: RunMode;
  /** The run was stopped by SIGINT/SIGTERM. */
  readonly interrupted: boolean;
  /** Findings that are client work (`isClientWork`): something to act on or to report. */
  readonly reportableFindings: number;
  /**
   * Actions that succeeded (created, adopted, deleted, already deleted) on client-work findings:
   * the tool's own work.
   */
  readonly succeededActions: number;
  readonly failedActions: number;
  /** Actions still pending, in flight or ambiguous: their outcome is not settled. */
  readonly unsettledActions: number;
}

/**
 * The process exit code of a finished run.
 *
 * @example
 *   exitCodeFor({ mode: "plan", interrupted: false, reportableFindings: 3, succeededActions: 0,
 *     failedActions: 0, unsettledActions: 0 }) // 2
 */
export function exitCodeFor(t: RunTally): ExitCode {
  if (t.interrupted) return ExitCode.interrupted;
  if (t.mode === "plan") return t.reportableFindings > 0 ? ExitCode.findings : ExitCode.ok;
  if (t.failedActions > 0 || t.unsettledActions > 0) return ExitCode.actionsFailed;
  if (t.mode === "apply" || t.mode === "revert") return ExitCode.ok;
  // reconcile: each succeeded action resolved one finding; what is left is for people.
  return t.reportableFindings - t.succeededActions > 0 ? ExitCode.findings : ExitCode.ok;
}

/**
 * The status a finished run closes with. A run that leaves actions in doubt is not complete: the
 * next apply points at it and `--resume` settles them by looking at the platform.
 *
 * @example
 *   closingStatus({ ...tally, interrupted: false, unsettledActions: 2 }) // "failed"
 */
export function closingStatus(t: RunTally): "completed" | "failed" | "interrupted" {
  if (t.interrupted) return "interrupted";
  return t.unsettledActions > 0 ? "failed" : "completed";
}
