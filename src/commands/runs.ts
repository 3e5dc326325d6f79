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
import { openDatabase } from "../db/connect.ts";
import { ensureSchema } from "../db/migrate.ts";
import { getRun, listRuns } from "../db/run-queries.ts";
import { ExitCode, UserError } from "../errors.ts";
import { FINDING_KINDS } from "../migration/classify.ts";
import { checkReportDir, reportDir, writeRunReport } from "../migration/report.ts";
import { renderRunsTable, shownStatus } from "../reports/runs-table.ts";
import type { RunSummary } from "../reports/summary.ts";
import { runCommand } from "./run-command.ts";

export const runsCommand: CommandModule = {
  command: "runs",
  describe:
    "List runs, newest first: mode, status (a running run without a heartbeat for a minute shows as stale), exit code, start time, error, findings and outcomes (each in a fixed order).",
  builder: (y: Argv) =>
    withOptions(y, runsOptions, "Runs:")
      .example("$0 runs --limit 5", "The five latest runs")
      .example("$0 runs --json", "As JSON lines"),
  handler: (argv) =>
    runCommand(argv as ConfigArgv, async ({ global, logger, argv: a }) => {
      const { limit } = loadRunsConfig(a);
      const handle = await openDatabase(global, logger);
      try {
        await ensureSchema(handle.db, logger);
        const runs = await listRuns(handle.db, limit);
        const now = new Date();
        if (global.json) {
          for (const r of runs) {
            const listed = {
              id: r.id,
              mode: r.mode,
              status: r.status,
              stale: shownStatus(r, now) !== r.status,
              exit_code: r.exit_code,
              started_at: r.started_at,
              finished_at: r.finished_at,
              heartbeat_at: r.heartbeat_at,
              error: r.error,
              source_rows_read: r.source_rows_read,
              counts: r.counts,
            };
            process.stdout.write(`${JSON.stringify(listed)}\n`);
          }
        } else if (runs.length === 0) process.stdout.write("No runs yet.\n");
        else process.stdout.write(`${renderRunsTable(runs, now, FINDING_KINDS)}\n`);
        return ExitCode.ok;
      } finally {
        await handle.close();
      }
    }),
};

export const reportCommand: CommandModule = {
  command: "report <run-id>",
  describe:
    "Regenerate a run's report folder (diff.csv, summary.json, summary.md) from the database.",
  builder: (y: Argv) =>
    y
      .positional("run-id", {
        type: "string",
        describe: "The run, as listed by `controls-migrate runs`.",
      })
      .options(yargsOptions(reportOptions))
      .example("$0 report 20261122-101500-ab12 --out /tmp/r", "Rewrite a run's report elsewhere"),
  handler: (argv) =>
    runCommand(argv as ConfigArgv, async ({ global, logger, argv: a }) => {
      const { out, all } = loadReportConfig(a);
      await checkReportDir(out);
      const handle = await openDatabase(global, logger);
      try {
        await ensureSchema(handle.db, logger);
        const id = String(a["run-id"]);
        const run = await getRun(handle.db, id);
        if (!run) throw new UserError(`No run "${id}". List runs with: controls-migrate runs`);
        if (!run.summary)
          throw new UserError(
            `Run ${id} is ${run.status} and has no summary yet; resume or re-run it.`,
          );
        const { reports: _old, ...summary } = run.summary as unknown as RunSummary;
        const full = await writeRunReport(handle.db, summary, reportDir(id, out), all);
        process.stdout.write(
          global.json
            ? `${JSON.stringify(full)}\n`
            : `Wrote ${full.reports.dir} (${full.reports.rows} rows)\n`,
        );
        return ExitCode.ok;
      } finally {
        await handle.close();
      }
    }),
};
