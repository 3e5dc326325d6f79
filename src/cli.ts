#!/usr/bin/env node
import yargs from "yargs";
import { hideBin } from "yargs/helpers";
import { commands } from "./commands/index.ts";
import { globalOptions, withOptions } from "./config.ts";

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
    .demandCommand(1, "Name a command; see the list above.")
    .recommendCommands()
    .help()
    .alias("h", "help")
    .version(false)
    .wrap(Math.min(110, process.stdout.columns || 100))
    .epilogue(
      "Exit codes: 0 done/in sync, 1 failed or aborted, 2 findings to report, 3 some actions failed, 130 interrupted.\nDocs: README.md",
    )
    .fail((msg, err) => {
      // yargs' own parse errors (YError) are usage errors; anything else is a bug to surface.
      if (err && err.name !== "YError") throw err;
      process.stderr.write(`Error: ${msg ?? err?.message}\nRun with --help for usage.\n`);
      process.exit(1);
    });
  for (const c of commands) parser = parser.command(c);
  await parser.parseAsync();
}

await main(hideBin(process.argv));
