#!/usr/bin/env node
/**
 * The thin CLI: strict yargs parsing into one options object, then one command function.
 * Exit codes are set by `runCommand`; see README "Exit codes".
 *
 * Start-up is node's own: nothing is imported before it is needed. `--version` reads
 * package.json and nothing else; `--help` loads yargs and the options table (its zod schemas are
 * factories, built when a command reads its options: `config/option-def.ts`); a command loads its
 * own module only (`commands/index.ts`).
 */

import { asksVersionOnly, TOOL_VERSION } from "./version.ts";

export async function main(args: string[]): Promise<void> {
  // The options table and its yargs rendering only: the loaders (and zod) come with a command.
  const [{ default: yargs }, { commandsFor }, usage, config, exits] = await Promise.all([
    import("yargs"),
    import("./commands/index.ts"),
    import("./commands/usage-error.ts"),
    import("./config/help-entry.ts"),
    import("./commands/exit-codes.ts"),
  ]);
  usage.refuseRetired(args);
  let parser = config
    .withOptions(
      yargs(args)
        .scriptName("controls-migrate")
        // Options are read by their flag names, as typed (config/load.ts): no camelCase twins, no
        // number guessing (zod turns text into numbers and says which flag is wrong).
        .parserConfiguration({ "camel-case-expansion": false, "parse-numbers": false })
        .usage(
          "$0 <command> [options]\n\nMigrates the legacy user_disabled/admin_disabled flags of your identities to platform identity controls (SELL_ONLY), verifies the platform-owned ones, and reports every difference.",
        ),
      config.globalOptions,
      "Global options:",
    )
    .strict()
    .demandCommand(1, usage.NAME_A_COMMAND)
    .recommendCommands()
    .help()
    .alias("h", "help")
    .version(TOOL_VERSION)
    // One short spelling, -v, as every command's --help shows it (issue 54: one alias).
    .alias("version", "v")
    .completion(
      "completion",
      "Print the shell completion script (bash, zsh): controls-migrate completion >> ~/.bashrc",
    )
    .wrap(config.helpWidth(process.stdout.columns))
    .epilogue(`${exits.topLevelExitCodes()}\nDocs: README.md`)
    .fail((msg, err, y) => usage.failUsage(args, msg, err, y));
  for (const c of await commandsFor(args)) parser = parser.command(c);
  skipHelpCache(parser);
  await parser.parseAsync();
}

/**
 * yargs renders a command's whole help right after starting its handler, only to keep it for a
 * later failure message; ours are printed by `failUsage`, which renders help itself when it needs
 * it. That rendering (cliui and wrap-ansi over about 60 options) was a fifth of every command's
 * start-up CPU, so it is skipped. Internal to yargs (pinned major), hence the guard: if the hook
 * moves, help is cached again and nothing else changes.
 */
function skipHelpCache(parser: object): void {
  type Internals = {
    getInternalMethods?: () => { getUsageInstance?: () => Record<string, unknown> };
  };
  const usage = (parser as Internals).getInternalMethods?.().getUsageInstance?.();
  if (usage && typeof usage.cacheHelpMessage === "function") usage.cacheHelpMessage = () => {};
}

/**
 * Until a command listens for them (`runCommand`), SIGINT, SIGTERM and SIGHUP while modules load
 * exit 130, as README's exit codes say, not as the signal's default death. Once a command has its
 * own listener this one leaves the signal to it.
 */
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(sig, () => {
    if (process.listenerCount(sig) === 1) process.exit(130);
  });
}

// No top-level await: the build bundles this module as CommonJS (`src/bin.ts`).
const args = process.argv.slice(2);
if (asksVersionOnly(args)) process.stdout.write(`${TOOL_VERSION}\n`);
else
  main(args).catch((err: unknown) => {
    process.exitCode = 1;
    console.error(err);
  });
