#!/usr/bin/env node
import { setFlagsFromString } from "node:v8";
import yargs from "yargs";
import { hideBin } from "yargs/helpers";
import { commands } from "./commands/index.ts";
import { failUsage, NAME_A_COMMAND } from "./commands/usage-error.ts";
import { globalOptions, withOptions } from "./config.ts";
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
    .completion(
      "completion",
      "Print the shell completion script (bash, zsh): controls-migrate completion >> ~/.bashrc",
    )
    .wrap(Math.min(120, process.stdout.columns || 100))
    .epilogue(
      "Exit codes: 0 done/in sync, 1 failed or refused, 2 findings to report, 3 some actions failed, 130 interrupted.\nDocs: README.md",
    )
    .fail((msg, err, y) => failUsage(args, msg, err, y));
  for (const c of commands) parser = parser.command(c);
  await parser.parseAsync();
}

// V8 grows a heap by a factor it picks from its GC speed, up to 4× the live size, so a run's peak
// memory follows its length more than its work: a 30 s plan of 1,000,000 identities held a main
// heap of 115–130 MB for 40–100 MB live, against about 85 MB for a 5 s plan of 100,000. A fixed
// factor of 1.5 keeps the heap near what is live: peak RSS of those two plans on PGlite 273–283
// and 252–268 MB (was 344–417 and 280–392), in the same wall time and CPU. V8 reads this flag at
// each collection, so it takes effect here, after start-up.
setFlagsFromString("--heap-growing-percent=50");
await main(hideBin(process.argv));
