import type { Argv, CommandModule } from "yargs";
import {
  type Argv as ConfigArgv,
  loadReportConfig,
  loadRunsConfig,
  reportOptions,
  runsOptions,
  withOptions,
  yargsOptions,
} from "../config.ts";
import { checkReportDir, reportDir } from "../migration/run/report.ts";
import { exitCodesEpilogue } from "./exit-codes.ts";
import { runReadCommand } from "./read-command.ts";
import { runCommand } from "./run-command.ts";

export const runsCommand: CommandModule = {
  command: "runs",
  describe:
    "List runs, newest first: mode, status (a running run without a heartbeat for a minute shows as stale), exit code, start time, error, findings and outcomes (each in a fixed order).",
  builder: (y: Argv) =>
    withOptions(y, runsOptions, "Runs:")
      .example("$0 runs --limit 5", "The five latest runs")
      .example("$0 runs --json", "As JSON lines")
      .epilogue(exitCodesEpilogue("runs")),
  handler: (argv) =>
    runCommand(argv as ConfigArgv, ({ global, logger, argv: a }) =>
      runReadCommand(global, logger, {
        command: "runs",
        limit: loadRunsConfig(a).limit,
        json: global.json,
      }),
    ),
};

export const reportCommand: CommandModule = {
  command: "report <run-id>",
  describe:
    "Regenerate a run's report folder (diff.csv, summary.json, summary.md, report.html) from the database, byte for byte as the run wrote it.",
  builder: (y: Argv) =>
    y
      .positional("run-id", {
        type: "string",
        describe: "The run, as listed by `controls-migrate runs`.",
      })
      .options(yargsOptions(reportOptions))
      .example("$0 report 20261122-101500-ab12 --out /tmp/r", "Rewrite a run's report elsewhere")
      .epilogue(exitCodesEpilogue("report")),
  handler: (argv) =>
    runCommand(argv as ConfigArgv, async ({ global, logger, argv: a }) => {
      const { out, all } = loadReportConfig(a);
      await checkReportDir(out);
      const runId = String(a["run-id"]);
      const dir = reportDir(runId, out);
      return runReadCommand(global, logger, {
        command: "report",
        runId,
        dir,
        all,
        json: global.json,
      });
    }),
};
