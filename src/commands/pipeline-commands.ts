import { createInterface } from "node:readline/promises";
import type { Argv, CommandModule } from "yargs";
import {
  applyOptions,
  type Argv as ConfigArgv,
  loadPipelineConfig,
  loadPlatformConfig,
  loadSourceConfig,
  platformOptions,
  reconcileOptions,
  runOptions,
  sourceOptions,
  withOptions,
  writeOptions,
} from "../config.ts";
import { type DatabaseHandle, openDatabase } from "../db/connect.ts";
import type { RunMode } from "../db/schema.ts";
import { ExitCode, UserError } from "../errors.ts";
import { writeMetricsFile } from "../migration/metrics-file.ts";
import { runPipeline } from "../migration/pipeline.ts";
import { createProgress } from "../migration/progress.ts";
import { createPlatformClient, READ_SCOPES, WRITE_SCOPES } from "../platform/index.ts";
import { renderSummaryTable } from "../reports/summary.ts";
import { redactUrl } from "../secret.ts";
import { type CommandContext, runCommand } from "./run-command.ts";

/** Asks on the terminal; refuses (exit 1) off a terminal without --yes. */
async function confirmOnTty(
  mode: RunMode,
  counts: { creates: number; deletes: number },
): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const what = [
      counts.creates ? `create ${counts.creates} SELL_ONLY client controls` : "",
      counts.deletes ? `delete ${counts.deletes} unexpected client controls (--prune)` : "",
    ]
      .filter(Boolean)
      .join(" and ");
    const answer = await rl.question(
      `${mode} will ${what} on the platform. Type "yes" to go ahead: `,
    );
    return answer.trim().toLowerCase() === "yes";
  } finally {
    rl.close();
  }
}

/** The body shared by plan, apply and reconcile. */
export async function pipelineHandler(mode: RunMode, ctx: CommandContext): Promise<number> {
  const { argv, global, logger, signal } = ctx;
  const pipeline = loadPipelineConfig(argv);
  const source = loadSourceConfig(argv);
  const platform = loadPlatformConfig(argv);
  const writer = mode !== "plan";
  if (writer && !pipeline.yes && !process.stdin.isTTY) {
    throw new UserError(
      `${mode} writes to the platform and needs confirmation: pass --yes, or run it on a terminal to confirm interactively. Try \`controls-migrate plan\` first to see what it would do.`,
    );
  }
  logger.addSecret(platform.clientSecret.reveal());
  const startedMs = Date.now();
  // --metrics-file: written at the end of every run, a failed one too (with what is known).
  const failed = async (err: unknown, db: DatabaseHandle["db"] | null): Promise<never> => {
    if (!pipeline.metricsFile) throw err;
    const interrupted = signal.aborted;
    await writeMetricsFile(
      pipeline.metricsFile,
      db,
      {
        mode,
        runId: null,
        status: interrupted ? "interrupted" : "failed",
        exitCode: interrupted ? ExitCode.interrupted : ExitCode.failed,
        durationS: Math.round((Date.now() - startedMs) / 100) / 10,
        finishedAt: new Date(),
      },
      logger,
    );
    throw err;
  };
  const handle = await openDatabase(global, logger).catch((err) => failed(err, null));
  const client = createPlatformClient(platform, {
    scopes: writer ? WRITE_SCOPES : READ_SCOPES,
    logger,
    signal,
  });
  try {
    const { summary, exitCode } = await runPipeline(
      {
        handle,
        client,
        logger,
        signal,
        progress: createProgress({ enabled: global.progress, logger }),
        confirm: async (counts) => pipeline.yes || confirmOnTty(mode, counts),
        databaseLabel: global.databaseUrl
          ? redactUrl(global.databaseUrl)
          : `pglite:${global.dataDir}`,
      },
      { mode, run: pipeline, source, platform },
    );
    if (pipeline.metricsFile)
      await writeMetricsFile(pipeline.metricsFile, handle.db, summary, logger);
    process.stderr.write(`${renderSummaryTable(summary)}\n`);
    if (global.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
    return exitCode;
  } catch (err) {
    return await failed(err, handle.db);
  } finally {
    await client.close();
    await handle.close();
  }
}

const connection = (y: Argv) =>
  withOptions(
    withOptions(withOptions(y, platformOptions, "Platform:"), sourceOptions, "Source relation:"),
    runOptions,
    "Run:",
  );

export const planCommand: CommandModule = {
  command: "plan",
  describe:
    "Dry-run audit: compare the source flags with the platform's controls and write the diff. Read-only.",
  builder: (y: Argv) =>
    connection(y)
      .example(
        "$0 plan",
        "Audit with env API_BASE_URL, OAUTH_TOKEN_URL, OAUTH_CLIENT_ID, OAUTH_CLIENT_SECRET",
      )
      .example(
        "$0 plan --state bulk --all --out audit/",
        "List every identity (1000 a page) and keep in_sync rows",
      )
      .epilogue(
        "Exit codes: 0 nothing to do or report, 2 findings to act on or report, 1 the run failed.",
      ),
  handler: (argv) => runCommand(argv as ConfigArgv, (ctx) => pipelineHandler("plan", ctx)),
};

export const applyCommand: CommandModule = {
  command: "apply",
  describe:
    "Create the missing client-side SELL_ONLY controls (journaled, resumable, rate-budgeted).",
  builder: (y: Argv) =>
    withOptions(withOptions(connection(y), writeOptions, "Apply:"), applyOptions, "Apply:")
      .conflicts("resume", "plan")
      .example("$0 apply --limit 10 --yes", "Canary: create 10 controls, then stop")
      .example("$0 apply --plan 20261122-101500-ab12 --yes", "Execute a reviewed plan")
      .example(
        "$0 apply --resume 20261122-101500-cd34 --yes",
        "Continue a run that crashed or was interrupted",
      )
      .epilogue(
        "Exit codes: 0 every action succeeded, 3 some failed (see the report; a re-run retries them), 1 aborted, 130 interrupted (resume it).",
      ),
  handler: (argv) => runCommand(argv as ConfigArgv, (ctx) => pipelineHandler("apply", ctx)),
};

export const reconcileCommand: CommandModule = {
  command: "reconcile",
  describe: "Plan + apply in one idempotent step, for repeated runs (cron) during the transition.",
  builder: (y: Argv) =>
    withOptions(
      withOptions(connection(y), writeOptions, "Reconcile:"),
      reconcileOptions,
      "Reconcile:",
    )
      .example("$0 reconcile --yes", "Nightly: create what is missing, report the rest")
      .example(
        "$0 reconcile --prune --yes",
        "Also remove client SELL_ONLY controls whose user_disabled was cleared",
      )
      .epilogue(
        "Exit codes: 0 in sync afterwards, 2 report-only findings remain, 3 some actions failed, 1 aborted.",
      ),
  handler: (argv) => runCommand(argv as ConfigArgv, (ctx) => pipelineHandler("reconcile", ctx)),
};
