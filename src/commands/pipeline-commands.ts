import type { Argv, CommandModule } from "yargs";
import {
  applyOptions,
  type Argv as ConfigArgv,
  holdOptions,
  loadRunConfigs,
  platformOptions,
  reconcileOptions,
  runOptions,
  sinceLastOptions,
  sourceOptions,
  withOptions,
  writeOptions,
} from "../config.ts";
import { type DatabaseHandle, openDatabase } from "../db/connection/connect.ts";
import type { RunMode } from "../db/schema.ts";
import { diskFullError } from "../disk-full.ts";
import { throwIfStartupInterrupted, UserError } from "../errors.ts";
import { checkReportDir, reportDir } from "../migration/run/report.ts";
import { failedRun, writeMetricsFile } from "../migration/steer/metrics-file.ts";
import { noteOutFolderRun } from "../reports/out-folder-lock.ts";
import { claimReportDir } from "../reports/report-files.ts";
import { renderSummaryTable } from "../reports/summary.ts";
import { logSummary } from "../reports/summary-log.ts";
import { askOnTerminal, confirmationQuestion } from "./confirm-prompt.ts";
import { exitCodesEpilogue } from "./exit-codes.ts";
import { runWiredPipeline } from "./pipeline-wiring.ts";
import { resumeConfigs, resumeFlags } from "./resume-settings.ts";
import { type CommandContext, runCommand } from "./run-command.ts";

/**
 * The body shared by plan, apply and reconcile: every setting checked (all problems at once) and
 * the report folder proven writable before the database is opened or a request is sent.
 */
export async function pipelineHandler(mode: RunMode, ctx: CommandContext): Promise<number> {
  const { argv, global, logger, signal } = ctx;
  const configs = loadRunConfigs(argv);
  const { pipeline, platform } = configs;
  const writer = mode !== "plan";
  if (writer && !pipeline.yes && !process.stdin.isTTY) {
    throw new UserError(
      `${mode} writes to the platform and needs confirmation: pass --yes, or run it on a terminal to confirm interactively. Try \`controls-migrate plan\` first to see what it would do.`,
    );
  }
  await checkReportDir(pipeline.out);
  // Another run's report there is refused before any work, not after an apply's last create.
  if (pipeline.out)
    await claimReportDir(reportDir("", pipeline.out), pipeline.resume, pipeline.force);
  const startedMs = Date.now();
  let runId: string | null = null;
  // --metrics-file: written at the end of every run, a failed one too (with what is known).
  const failed = async (thrown: unknown, db: DatabaseHandle["db"] | null): Promise<never> => {
    // The embedded database's disk full is named with its folder and flag.
    const err = global.databaseUrl ? thrown : diskFullError(thrown, global.dataDir, "--data-dir");
    if (pipeline.metricsFile) {
      const run = failedRun(mode, runId, err, signal.aborted, startedMs);
      await writeMetricsFile(pipeline.metricsFile, db, run, logger);
    }
    throw err;
  };
  const handle = await openDatabase(global, logger).catch((err) => failed(err, null));
  try {
    // A signal heard while the database was opening: stop before its migrations or a run.
    throwIfStartupInterrupted(signal, "while the database was being opened");
    // A resume goes on with the run's own settings (its rate, limit...), where not given again.
    const resumed = await resumeConfigs(handle, configs, argv);
    const limit = resumed.configs.pipeline.limit;
    const result = await runWiredPipeline(
      { configs: resumed.configs, global, handle, logger, signal },
      {
        mode,
        settingChanges: resumed.changes,
        resumeFlags: resumeFlags(argv, mode),
        confirm: async (writes) =>
          pipeline.yes ||
          askOnTerminal(confirmationQuestion(mode, writes, platform, limit), signal),
        onRunStarted: (id) => {
          runId = id;
          noteOutFolderRun(id);
          ctx.noteRun(id);
        },
      },
    );
    if (pipeline.metricsFile)
      await writeMetricsFile(pipeline.metricsFile, handle.db, result.summary, logger);
    if (global.logFormat === "json") logSummary(logger, result.summary);
    else process.stderr.write(`${renderSummaryTable(result.summary)}\n`);
    if (global.json) process.stdout.write(`${JSON.stringify(result.summary)}\n`);
    // The very last line after an interruption: how to go on.
    if (result.resumeCommand) {
      if (global.logFormat === "json") logger.warn(`Resume with: ${result.resumeCommand}`);
      else process.stderr.write(`Resume with: ${result.resumeCommand}\n`);
    }
    return result.exitCode;
  } catch (err) {
    return await failed(err, handle.db);
  } finally {
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
    withOptions(connection(y), sinceLastOptions, "Reading only what changed:")
      .example(
        "$0 plan",
        "Audit with env API_BASE_URL, OAUTH_TOKEN_URL, OAUTH_CLIENT_ID, OAUTH_CLIENT_SECRET",
      )
      .example(
        "$0 plan --state bulk --all --out audit/",
        "List every identity (1000 a page) and keep in_sync rows",
      )
      .epilogue(exitCodesEpilogue("plan")),
  handler: (argv) => runCommand(argv as ConfigArgv, (ctx) => pipelineHandler("plan", ctx)),
};

export const applyCommand: CommandModule = {
  command: "apply",
  describe:
    "Create the missing client-side SELL_ONLY controls (journaled, resumable, rate-budgeted).",
  builder: (y: Argv) =>
    withOptions(
      withOptions(
        withOptions(connection(y), writeOptions, "Apply:"),
        holdOptions,
        "Holding writes (besides `controls-migrate pause`):",
      ),
      applyOptions,
      "Apply:",
    )
      .conflicts("resume", "plan")
      .example("$0 apply --limit 10 --yes", "Canary: create 10 controls, then stop")
      .example("$0 apply --plan 20261122-101500-ab12 --yes", "Execute a reviewed plan")
      .example(
        "$0 apply --resume 20261122-101500-cd34 --yes",
        "Continue a run that crashed or was interrupted",
      )
      .epilogue(exitCodesEpilogue("apply")),
  handler: (argv) => runCommand(argv as ConfigArgv, (ctx) => pipelineHandler("apply", ctx)),
};

export const reconcileCommand: CommandModule = {
  command: "reconcile",
  describe: "Plan + apply in one idempotent step, for repeated runs (cron) during the transition.",
  builder: (y: Argv) =>
    withOptions(
      withOptions(
        withOptions(
          withOptions(connection(y), writeOptions, "Reconcile:"),
          sinceLastOptions,
          "Reading only what changed:",
        ),
        holdOptions,
        "Holding writes (besides `controls-migrate pause`):",
      ),
      reconcileOptions,
      "Reconcile:",
    )
      .example("$0 reconcile --yes", "Nightly: create what is missing, report the rest")
      .example(
        "$0 reconcile --since-last --yes",
        "Nightly at the cost of what changed: list only identities updated since the last complete read; every 7th night reads everything and checks",
      )
      .example(
        "$0 reconcile --prune --yes",
        "Also remove client SELL_ONLY controls whose user_disabled was cleared",
      )
      .epilogue(exitCodesEpilogue("reconcile")),
  handler: (argv) => runCommand(argv as ConfigArgv, (ctx) => pipelineHandler("reconcile", ctx)),
};
