/**
 * Every command, as yargs needs it to list them: name and one line of help, and how to load the
 * module that does the work. A command's module (and everything it imports: the database, the
 * platform client, the sandbox) is loaded only when the command line names it, so `--help`,
 * `--version` and each command load nothing they do not use.
 * `test/unit/commands.lazy-registry.test.ts` checks these lines against the modules.
 */
import type { CommandModule } from "yargs";

// biome-ignore lint/suspicious/noExplicitAny: yargs command modules are heterogeneous by design
export type AnyCommand = CommandModule<any, any>;

export interface CommandEntry {
  /** The module's `command` string: name and positional arguments. */
  readonly command: string;
  /** The module's `describe`, shown in the command list. */
  readonly describe: string;
  readonly load: () => Promise<AnyCommand>;
}

const entry = (command: string, describe: string, load: () => Promise<AnyCommand>) =>
  Object.freeze({ command, describe, load });

export const commandEntries: readonly CommandEntry[] = Object.freeze([
  entry(
    "plan",
    "Dry-run audit: compare the source flags with the platform's controls and write the diff. Read-only.",
    async () => (await import("./pipeline-commands.ts")).planCommand,
  ),
  entry(
    "apply",
    "Create the missing client-side SELL_ONLY controls (journaled, resumable, rate-budgeted).",
    async () => (await import("./pipeline-commands.ts")).applyCommand,
  ),
  entry(
    "reconcile",
    "Plan + apply in one idempotent step, for repeated runs (cron) during the transition.",
    async () => (await import("./pipeline-commands.ts")).reconcileCommand,
  ),
  entry(
    "discard <run-id>",
    "Give up an unfinished apply/reconcile: settle its unknown outcomes on the platform (as --resume does), then discard the rest.",
    async () => (await import("./discard.ts")).discardCommand,
  ),
  entry(
    "status [run-id]",
    "Show a writer run (the latest, or the one named): status, progress, write rate, ETA, 429s, paused or not, rate budget. Works from another terminal while it runs.",
    async () => (await import("./status.ts")).statusCommand,
  ),
  entry(
    "pause [run-id]",
    "Pause a running apply/reconcile/revert: within 2 s it sends no new write; requests in flight finish, heartbeat and status go on.",
    async () => (await import("./steer.ts")).pauseCommand,
  ),
  entry(
    "continue [run-id]",
    "Let a paused run write again.",
    async () => (await import("./steer.ts")).continueCommand,
  ),
  entry(
    "set-rate <run-id-or-rate> [rate]",
    "Change a running run's write budget (requests/s) within 2 s: `set-rate N` or `set-rate RUN_ID N`. Same ceiling as --rate.",
    async () => (await import("./steer.ts")).setRateCommand,
  ),
  entry(
    "revert <run-id>",
    "Undo what an apply or reconcile wrote: delete the controls it created (if still active, CLIENT, overridable, same id), re-create the ones it pruned. Journaled and resumable like an apply.",
    async () => (await import("./revert.ts")).revertCommand,
  ),
  entry(
    "report <run-id>",
    "Regenerate a run's report folder (diff.csv, summary.json, summary.md, report.html) from the database, byte for byte as the run wrote it.",
    async () => (await import("./runs.ts")).reportCommand,
  ),
  entry(
    "runs",
    "List runs, newest first: mode, status (a running run without a heartbeat for a minute shows as stale), exit code, start time, error, findings and outcomes (each in a fixed order).",
    async () => (await import("./runs.ts")).runsCommand,
  ),
  entry(
    "show <identity-id>",
    "Everything the tool knows about one identity, newest run first: source flags, controls observed on the platform, findings, actions with attempts, HTTP statuses, control ids and errors.",
    async () => (await import("./show.ts")).showCommand,
  ),
  entry(
    "db",
    "Manage the tool's database (migrate) and seed a synthetic source relation (seed).",
    async () => (await import("./db.ts")).dbCommand,
  ),
  entry(
    "version",
    "Print the version (the same as --version).",
    async () => (await import("./version.ts")).versionCommand,
  ),
]);

/** The name a command is typed as: `status` of `status [run-id]`. */
export const commandName = (e: CommandEntry): string => e.command.split(" ")[0] as string;

/** A command's place in the list when the command line does not name it: its help line only. */
function listedOnly(e: CommandEntry): AnyCommand {
  return {
    command: e.command,
    describe: e.describe,
    handler: () => {
      throw new Error(`${commandName(e)} was run without its module loaded`);
    },
  };
}

/**
 * The yargs command modules for a command line: the real module of every command whose name is
 * one of its words (the command yargs runs is always one of them), a help line for the others.
 *
 * @example
 *   await commandsFor(["status", "--json"]) // status's module, help lines for the rest
 */
export async function commandsFor(args: readonly string[]): Promise<AnyCommand[]> {
  const words = new Set(args);
  return Promise.all(
    commandEntries.map((e) => (words.has(commandName(e)) ? e.load() : listedOnly(e))),
  );
}

/** Every command's real module (tests, and tools that need all of them). */
export const loadAllCommands = (): Promise<AnyCommand[]> =>
  Promise.all(commandEntries.map((e) => e.load()));
