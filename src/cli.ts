#!/usr/bin/env node
import yargs from "yargs";
import { hideBin } from "yargs/helpers";
import { commands } from "./commands/index.ts";
import { failUsage, NAME_A_COMMAND } from "./commands/usage-error.ts";
import { globalOptions, helpWidth, withOptions } from "./config.ts";
import { TOOL_VERSION } from "./version.ts";

/**
 * The thin CLI: strict yargs parsing into one options object, then one command function.
 * Exit codes are set by `runCommand`; see README "Exit codes".
 */
export async function main(args: string[]): Promise<void> {
  let parser = withOptions(
    yargs(args)
      .scriptName("controls-migrate")
      // Options are read by their flag names, as typed (config/load.ts): no camelCase twins, no
      // number guessing (zod turns text into numbers and says which flag is wrong).
      .parserConfiguration({ "camel-case-expansion": false, "parse-numbers": false })
      .usage(
        "$0 <command> [options]\n\nMigrates the legacy user_disabled/admin_disabled flags of your identities to platform identity controls (SELL_ONLY), verifies the platform-owned ones, and reports every difference.",
      ),
    globalOptions,
    "Global options:",
  )
    .strict()
    .demandCommand(1, NAME_A_COMMAND)
    .recommendCommands()
    .help()
    .alias("h", "help")
    .version(TOOL_VERSION)
    .alias("v", "version")
    .alias("V", "version")
    .completion(
      "completion",
      "Print the shell completion script (bash, zsh): controls-migrate completion >> ~/.bashrc",
    )
    .wrap(helpWidth(process.stdout.columns))
    .epilogue(
      "Exit codes: 0 done/in sync, 1 failed or refused, 2 findings to report, 3 some actions failed, 130 interrupted.\nDocs: README.md",
    )
    .fail((msg, err, y) => failUsage(args, msg, err, y));
  for (const c of commands) parser = parser.command(c);
  await parser.parseAsync();
}

await main(hideBin(process.argv));
