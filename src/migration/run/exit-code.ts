/**
 * The exit-code policy of plan, apply and reconcile, and the status a run closes with. Pure: it
 * reads a tally of the finished run and nothing else. README "Exit codes" documents it.
 */
import type { RunMode } from "../../db/schema.ts";
import { ExitCode } from "../../errors.ts";

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

/**
 * Which findings make a reconcile exit 2 (`--exit-on`): `client`, work left for the client;
 * `any`, any finding left, platform-owned ones included; `changes`, outside changes or new client
 * work since the previous writing run (a nightly cron's alert).
 */
export const EXIT_ON = ["client", "any", "changes"] as const;
export type ExitOn = (typeof EXIT_ON)[number];

/**
 * Findings that are work for the client (a person on the client's side decides or fixes): the
 * rest (`missing_service_control`, `unexpected_service_control`, `identity_not_found`,
 * `unknown_to_source`, `source_warning`) are the platform's to migrate, or facts to report.
 */
export const CLIENT_WORK_KINDS: readonly string[] = [
  "missing_client_control",
  "unexpected_client_control",
  "attribute_mismatch",
  "invalid_source_row",
  "read_failed",
  "orphaned_own_control",
  "contested",
  "platform_will_restrict",
  "duplicate_client_control",
  "platform_unaware_of_admin_flag",
  "source_behind_platform",
  // The platform changed an identity without moving its updated_at: --since-last cannot be trusted.
  "stale_incremental",
];

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
  /**
   * Findings of any kind but `in_sync` left after the run's succeeded actions, platform-owned ones
   * included (`--exit-on any`); absent, reportable findings less succeeded actions.
   */
  readonly anyFindingsLeft?: number;
  /** reconcile: what exits 2 (default `client`). */
  readonly exitOn?: ExitOn;
  /** Findings of {@link CLIENT_WORK_KINDS} left after the run's succeeded actions. */
  readonly clientWorkLeft?: number;
  /** `--exit-on changes`: outside changes since the previous writing run. */
  readonly outsideChanges?: number;
  /** `--exit-on changes`: client work new since the previous writing run and left after this one. */
  readonly newClientWork?: number;
  /** Candidates whose platform state the run could not read (`read_failed` findings). */
  readonly readFailed?: number;
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
  // A candidate whose state was not read is not known to be done: never success, never "findings".
  if ((t.readFailed ?? 0) > 0) return ExitCode.actionsFailed;
  if (t.mode === "plan") return t.reportableFindings > 0 ? ExitCode.findings : ExitCode.ok;
  if (t.failedActions > 0 || t.unsettledActions > 0) return ExitCode.actionsFailed;
  if (t.mode === "apply" || t.mode === "revert") return ExitCode.ok;
  // reconcile: each succeeded action resolved one finding; what is left is for people.
  const left =
    (t.exitOn ?? "client") === "any"
      ? (t.anyFindingsLeft ?? t.reportableFindings - t.succeededActions)
      : t.exitOn === "changes"
        ? (t.outsideChanges ?? 0) + (t.newClientWork ?? 0)
        : (t.clientWorkLeft ?? t.reportableFindings - t.succeededActions);
  return left > 0 ? ExitCode.findings : ExitCode.ok;
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

/**
 * Why a run read nothing it needed: the read of every candidate failed (the token endpoint, or
 * every read refused). Null when it read at least one, or had none to read. The run fails (exit 1).
 *
 * @example
 *   readOutage({ candidates: 12, read: 0, readFailed: 12 }, "POST /oauth2/token: 503 Service Unavailable")
 *   // "The platform state of none of the 12 candidates could be read (POST /oauth2/token: 503 ...) ..."
 */
export function readOutage(
  c: { readonly candidates: number; readonly read: number; readonly readFailed: number },
  cause: string | null,
): string | null {
  if (c.candidates <= 0 || c.read > 0 || c.readFailed === 0) return null;
  return `The platform state of none of the ${c.candidates} candidates could be read (${cause ?? "every read failed"}): nothing was concluded from this run. Check the platform and the token endpoint, then run the command again.`;
}
