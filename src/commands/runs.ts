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
import { reportDir, writeRunReport } from "../migration/report.ts";
import type { RunSummary } from "../reports/summary.ts";
import { runCommand } from "./run-command.ts";

export const runsCommand: CommandModule = {
  command: "runs",
  describe: "List runs with their mode, status, counts and start time (newest first).",
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
        for (const r of runs) {
          const counts = Object.entries(r.counts ?? {})
            .filter(([, v]) => v > 0)
            .map(([k, v]) => `${k}=${v}`)
            .join(" ");
          if (global.json) {
            process.stdout.write(
              `${JSON.stringify({ id: r.id, mode: r.mode, status: r.status, exit_code: r.exit_code, started_at: r.started_at, finished_at: r.finished_at, counts: r.counts })}\n`,
            );
          } else {
            process.stdout.write(
              `${r.id}  ${r.mode.padEnd(9)} ${r.status.padEnd(11)} exit ${String(r.exit_code ?? "-").padEnd(3)} ${r.started_at.toISOString()}  ${counts}\n`,
            );
          }
        }
        if (runs.length === 0 && !global.json) process.stdout.write("No runs yet.\n");
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
