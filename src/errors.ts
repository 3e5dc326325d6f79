/**
 * Process exit codes. Documented in the README; keep both in step.
 */
export const ExitCode = {
  /** Success: nothing left to do. */
  ok: 0,
  /** The run failed or aborted (bad configuration, lost database, lock held, refused). */
  failed: 1,
  /** Findings remain that need a person (plan: anything to report; reconcile: report-only). */
  findings: 2,
  /** Some actions failed; they are in the report and a re-run retries them. */
  actionsFailed: 3,
  /** The run's books do not balance (a candidate without a finding, a finding without its action). */
  unbalanced: 4,
  /** Interrupted by SIGINT/SIGTERM; the run can be resumed. */
  interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * An error the user can fix: a bad flag, env var, relation or column. The CLI prints only its
 * message (no stack unless --log-level debug) and exits 1. The message names the culprit.
 */
export class UserError extends Error {
  override readonly name = "UserError";
}

/**
 * A command stopped by SIGINT/SIGTERM (exit 130). The message says what was kept; when the run can
 * be continued, `resumeCommand` is printed as the very last line (`Resume with: ...`).
 */
export class Interrupted extends Error {
  override readonly name = "Interrupted";
  readonly resumeCommand: string | undefined;

  constructor(message: string, resumeCommand?: string) {
    super(message);
    this.resumeCommand = resumeCommand;
  }
}

/**
 * Throws an Interrupted when `signal` has aborted while the command was still starting (opening or
 * migrating the database, taking the writer lock): nothing is started after a SIGINT/SIGTERM.
 *
 * @example
 *   throwIfStartupInterrupted(signal, "while the database was being opened");
 */
export function throwIfStartupInterrupted(signal: AbortSignal | undefined, when: string): void {
  if (signal?.aborted) throw new Interrupted(`Interrupted ${when}; no run was started.`);
}
