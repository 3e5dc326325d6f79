/**
 * Which exit codes each command can return, and what each means there: written once, rendered as
 * each command's `--help` epilogue, the top-level help's line and README's exit-code table
 * (`npm run docs:exit-codes`; `test/unit/commands.exit-codes.test.ts` fails while README is out
 * of date). Every command can exit 1 (a refused command line at least) and 130 (a signal: every
 * command runs under `runCommand`, which maps SIGINT/SIGTERM/SIGHUP to 130).
 */
import { ExitCode } from "../errors.ts";

/** One code and what it means for one command, as its `--help` says it. */
export type ExitMeaning = readonly [code: ExitCode, meaning: string];

const failed = (what: string): ExitMeaning => [ExitCode.failed, what];
const interrupted = (what = "interrupted"): ExitMeaning => [ExitCode.interrupted, what];
const unbalanced: ExitMeaning = [
  ExitCode.unbalanced,
  "the run's books do not balance (recorded failed; run it again)",
];
const runFailed = failed(
  "the run failed or was refused (none of its candidates could be read, too)",
);
const unread: ExitMeaning = [
  ExitCode.actionsFailed,
  "the state of some candidates could not be read (read_failed in the report)",
];
const shown: readonly ExitMeaning[] = [
  [ExitCode.ok, "shown"],
  failed("refused (no database, a bad flag)"),
  interrupted(),
];
const steered = (done: string, refused: string): readonly ExitMeaning[] => [
  [ExitCode.ok, `${done} (or recorded for the run to read)`],
  failed(`refused (${refused})`),
  interrupted(),
];

/** Every command (by its typed name; `db migrate` and `db seed` by both words) and its codes. */
export const COMMAND_EXIT_CODES: Readonly<Record<string, readonly ExitMeaning[]>> = Object.freeze({
  plan: [
    [ExitCode.ok, "nothing to do or report"],
    runFailed,
    [ExitCode.findings, "findings to act on or report"],
    unread,
    unbalanced,
    interrupted("interrupted (what was read is kept)"),
  ],
  apply: [
    [ExitCode.ok, "every action succeeded"],
    runFailed,
    [
      ExitCode.actionsFailed,
      "some actions failed or some candidates could not be read (see the report; a re-run retries them)",
    ],
    unbalanced,
    interrupted("interrupted (resume it)"),
  ],
  reconcile: [
    [ExitCode.ok, "in sync afterwards (by --exit-on)"],
    runFailed,
    [ExitCode.findings, "findings left for a person (by --exit-on)"],
    [
      ExitCode.actionsFailed,
      "some actions failed or some candidates could not be read (see the report; a re-run retries them)",
    ],
    unbalanced,
    interrupted("interrupted (resume it)"),
  ],
  discard: [
    [ExitCode.ok, "discarded"],
    failed("refused (unknown run, still in doubt, not confirmed)"),
    interrupted(),
  ],
  status: [
    [ExitCode.ok, "shown"],
    failed("refused (no such run, no database)"),
    interrupted("interrupted (watching stopped by Ctrl-C)"),
  ],
  pause: steered("paused", "no such running run"),
  continue: steered("continued", "no such running run"),
  "set-rate": steered("changed", "no such running run, a rate above the limit"),
  revert: [
    [ExitCode.ok, "reverted"],
    failed("refused or failed (a revert, a run still going, already reverted)"),
    [ExitCode.actionsFailed, "some actions failed (see the report; a re-run retries them)"],
    interrupted("interrupted (resume it)"),
  ],
  report: [
    [ExitCode.ok, "written"],
    failed("refused (no such run, a report folder of another run)"),
    interrupted(),
  ],
  runs: shown,
  show: shown,
  "db migrate": [
    [ExitCode.ok, "migrated"],
    failed("failed (no database, a newer schema)"),
    interrupted(),
  ],
  "db seed": [[ExitCode.ok, "seeded"], failed("failed (no database, a bad flag)"), interrupted()],
  version: [[ExitCode.ok, "printed"], failed("a bad command line"), interrupted()],
});

/**
 * A command's exit codes as its `--help` ends.
 *
 * @example
 *   exitCodesEpilogue("status")
 *   // "Exit codes: 0 shown, 1 refused (no such run, no database), 130 interrupted (watching ...)."
 */
export function exitCodesEpilogue(command: string): string {
  const codes = COMMAND_EXIT_CODES[command];
  if (!codes) throw new Error(`no exit codes written for ${command}`);
  return `Exit codes: ${codes.map(([code, what]) => `${code} ${what}`).join(", ")}.`;
}

/** What a code means whichever command returns it. */
const IN_GENERAL: Readonly<Record<ExitCode, string>> = Object.freeze({
  [ExitCode.ok]: "done/in sync",
  [ExitCode.failed]: "failed or refused",
  [ExitCode.findings]: "findings to report",
  [ExitCode.actionsFailed]: "some actions failed",
  [ExitCode.unbalanced]: "the run's books do not balance",
  [ExitCode.interrupted]: "interrupted",
});

/** Every exit code, in order. */
export const EXIT_CODES: readonly ExitCode[] = Object.freeze(
  Object.values(ExitCode).sort((a, b) => a - b),
);

/**
 * The commands that can return a code, in the table's order, or "every command".
 *
 * @example
 *   commandsReturning(4) // "plan, apply, reconcile"
 */
export function commandsReturning(code: ExitCode): string {
  const all = Object.entries(COMMAND_EXIT_CODES);
  const some = all.filter(([, codes]) => codes.some(([c]) => c === code)).map(([name]) => name);
  return some.length === all.length ? "every command" : some.join(", ");
}

/**
 * The top-level help's line: every code any command returns, and which commands return it.
 *
 * @example
 *   topLevelExitCodes() // "Exit codes: 0 done/in sync (every command), ..., 4 the run's ..."
 */
export function topLevelExitCodes(): string {
  const each = EXIT_CODES.map((code) => {
    const who = commandsReturning(code);
    return `${code} ${IN_GENERAL[code]}${who === "every command" ? "" : ` (${who})`}`;
  });
  return `Exit codes: ${each.join(", ")}. Each command's --help says what its own mean.`;
}
