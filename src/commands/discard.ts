import type { Argv, CommandModule } from "yargs";
import {
  type Argv as ConfigArgv,
  loadRunConfigs,
  platformOptions,
  withOptions,
  writeOptions,
} from "../config.ts";
import { openDatabase } from "../db/connection/connect.ts";
import { ExitCode, UserError } from "../errors.ts";
import { discardRun } from "../migration/run/run-discard.ts";
import { createProgress } from "../migration/steer/progress.ts";
import { createPlatformClient, READ_SCOPES } from "../platform/index.ts";
import { askOnTerminal } from "./confirm-prompt.ts";
import { exitCodesEpilogue } from "./exit-codes.ts";
import { type CommandContext, runCommand } from "./run-command.ts";

async function discard(ctx: CommandContext): Promise<number> {
  const { argv, global, logger, signal } = ctx;
  const id = String(argv["run-id"]);
  const configs = loadRunConfigs(argv);
  const { platform, pipeline } = configs;
  if (!pipeline.yes && !process.stdin.isTTY) {
    throw new UserError(
      `discard gives up run ${id} for good and needs confirmation: pass --yes, or run it on a terminal.`,
    );
  }
  logger.addSecret(platform.clientSecret.reveal());
  const handle = await openDatabase(global, logger);
  // Settling only reads the platform: no write scope is asked for.
  const client = createPlatformClient(platform, { scopes: READ_SCOPES, logger, signal });
  try {
    if (!pipeline.yes) {
      const question = `discard will settle run ${id}'s unknown outcomes on ${platform.apiUrl}, then give up its pending actions for good. Type "yes" to go ahead: `;
      if (!(await askOnTerminal(question, signal))) {
        throw new UserError(`Not confirmed: run ${id} is left as it was.`);
      }
    }
    const result = await discardRun(
      {
        handle,
        client,
        logger,
        signal,
        progress: createProgress({ enabled: false, logger }),
        confirm: async () => false,
        onRunStarted: ctx.noteRun,
      },
      { mode: "apply", run: pipeline, source: configs.source, platform },
      id,
    );
    const line = `Run ${id} discarded: ${result.succeeded} actions are done on the platform, ${result.discarded} pending actions were given up. The next apply starts afresh.`;
    process.stderr.write(`${line}\n`);
    if (global.json) process.stdout.write(`${JSON.stringify({ run_id: id, ...result })}\n`);
    return ExitCode.ok;
  } finally {
    await client.close();
    await handle.close();
  }
}

/** `discard RUN_ID`: give up an unfinished run on purpose, after settling what is in doubt. */
export const discardCommand: CommandModule = {
  command: "discard <run-id>",
  describe:
    "Give up an unfinished apply/reconcile: settle its unknown outcomes on the platform (as --resume does), then discard the rest.",
  builder: (y: Argv) =>
    withOptions(
      withOptions(
        y.positional("run-id", {
          type: "string",
          describe: "The run, as listed by `controls-migrate runs`.",
        }),
        platformOptions,
        "Platform:",
      ),
      { yes: writeOptions.yes },
      "Discard:",
    )
      .example("$0 discard 20261122-101500-cd34", "Asks for confirmation on a terminal")
      .example("$0 discard 20261122-101500-cd34 --yes", "In a script")
      .epilogue(exitCodesEpilogue("discard")),
  handler: (argv) => runCommand(argv as ConfigArgv, discard),
};
