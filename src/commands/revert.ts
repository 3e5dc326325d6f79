import type { Argv, CommandModule } from "yargs";
import {
  type Argv as ConfigArgv,
  holdOptions,
  loadRevertConfigs,
  platformOptions,
  revertOptions,
  runOptions,
  withOptions,
  writeOptions,
} from "../config.ts";
import { openDatabase } from "../db/connection/connect.ts";
import { UserError } from "../errors.ts";
import { checkReportDir } from "../migration/run/report.ts";
import { runRevert } from "../migration/run/revert.ts";
import { createProgress } from "../migration/steer/progress.ts";
import { createPlatformClient, WRITE_SCOPES } from "../platform/index.ts";
import { renderSummaryTable } from "../reports/summary.ts";
import { askOnTerminal, limitedWrites } from "./confirm-prompt.ts";
import { exitCodesEpilogue } from "./exit-codes.ts";
import { type CommandContext, runCommand } from "./run-command.ts";

/** The revert's question: exactly what this invocation deletes and creates (under `--limit`). */
function revertQuestion(
  ofRunId: string,
  writes: { creates: number; deletes: number },
  limit: number | undefined,
  platform: { apiUrl: string } | undefined,
): string {
  const { sent, total, rest } = limitedWrites(writes, limit, "revert --resume");
  const what =
    sent < total
      ? `undo ${sent} of the ${total} writes it made (${writes.deletes} controls it created to delete, ${writes.creates} it pruned to create back; --limit ${limit}${rest})`
      : `delete ${writes.deletes} controls it created and create ${writes.creates} SELL_ONLY controls it pruned`;
  return `revert of ${ofRunId} will ${what} on ${platform?.apiUrl}. Type "yes" to go ahead: `;
}

/** `revert RUN_ID`: every setting checked before the database is opened or a request is sent. */
async function revert(ctx: CommandContext): Promise<number> {
  const { argv, global, logger, signal } = ctx;
  const ofRunId = String(argv["run-id"]);
  const { revert: config, platform } = loadRevertConfigs(argv);
  const out = config.out;
  if (!config.dryRun && !config.yes && !process.stdin.isTTY) {
    throw new UserError(
      `revert deletes the controls run ${ofRunId} created and needs confirmation: pass --yes, or run it on a terminal. See what it would do with: controls-migrate revert ${ofRunId} --dry-run`,
    );
  }
  await checkReportDir(out);
  if (platform) logger.addSecret(platform.clientSecret.reveal());
  const handle = await openDatabase(global, logger);
  const client = platform
    ? createPlatformClient(platform, { scopes: WRITE_SCOPES, logger, signal })
    : undefined;
  try {
    const result = await runRevert(
      {
        handle,
        ...(client ? { client } : {}),
        logger,
        signal,
        progress: createProgress({ enabled: global.progress, logger, signal }),
        confirm: async (writes) =>
          config.yes ||
          askOnTerminal(revertQuestion(ofRunId, writes, config.limit, platform), signal),
        onRunStarted: ctx.noteRun,
        ...(global.databaseUrl ? {} : { localChannelDir: global.dataDir }),
      },
      { ofRunId, revert: config, ...(platform ? { platform } : {}), ...(out ? { out } : {}) },
    );
    process.stderr.write(`${renderSummaryTable(result.summary)}\n`);
    if (global.json) process.stdout.write(`${JSON.stringify(result.summary)}\n`);
    if (result.resumeCommand) process.stderr.write(`Resume with: ${result.resumeCommand}\n`);
    return result.exitCode;
  } finally {
    await client?.close();
    await handle.close();
  }
}

/** `revert RUN_ID`. */
export const revertCommand: CommandModule = {
  command: "revert <run-id>",
  describe:
    "Undo what an apply or reconcile wrote: delete the controls it created (if still active, CLIENT, overridable, same id), re-create the ones it pruned. Journaled and resumable like an apply.",
  builder: (y: Argv) =>
    withOptions(
      withOptions(
        withOptions(
          withOptions(
            y.positional("run-id", {
              type: "string",
              describe:
                "The apply or reconcile run to revert, as listed by `controls-migrate runs`.",
            }),
            platformOptions,
            "Platform:",
          ),
          {
            out: runOptions.out,
            yes: writeOptions.yes,
            resume: writeOptions.resume,
            reasonCode: writeOptions.reasonCode,
          },
          "Revert:",
        ),
        revertOptions,
        "Revert:",
      ),
      holdOptions,
      "Holding writes (besides `controls-migrate pause`):",
    )
      .example("$0 revert 20261122-101500-cd34 --dry-run", "What it would undo; sends nothing")
      .example("$0 revert 20261122-101500-cd34 --yes", "Undo it")
      .example(
        "$0 revert 20261122-101500-cd34 --resume 20261123-080000-ef56 --yes",
        "Continue a revert that crashed, was interrupted or was limited",
      )
      .epilogue(exitCodesEpilogue("revert")),
  handler: (argv) => runCommand(argv as ConfigArgv, revert),
};
