import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Argv, CommandModule } from "yargs";
import {
  type Argv as ConfigArgv,
  demoOptions,
  loadDemoConfig,
  loadGlobalConfig,
  loadPipelineConfig,
  loadPlatformConfig,
  loadSourceConfig,
  withOptions,
} from "../config.ts";
import { openDatabase } from "../db/connect.ts";
import { ensureSchema } from "../db/migrate.ts";
import { seedSource } from "../db/seed.ts";
import { ExitCode } from "../errors.ts";
import { renderSummaryTable } from "../reports/summary.ts";
import { syntheticIdentities } from "../synthetic.ts";
import { runWiredPipeline } from "./pipeline-wiring.ts";
import { runCommand } from "./run-command.ts";

/**
 * The README's main-job command: a whole migration rehearsed on embedded defaults (a fresh PGlite
 * folder and an in-process sandbox), no server and no network. plan → apply --yes → reconcile.
 * The throwaway database folder is removed at the end unless --keep is given.
 */
export const demoCommand: CommandModule = {
  command: "demo",
  describe:
    "Rehearse a whole migration on an embedded database and an in-process sandbox (no network).",
  builder: (y: Argv) =>
    withOptions(y, demoOptions, "Demo:")
      .example("$0 demo", "10,000 identities, half-finished transition with drift and bad rows")
      .example("$0 demo --identities 50000 --no-progress", "Bigger, with line logs"),
  handler: (argv) =>
    runCommand(argv as ConfigArgv, async ({ logger, signal, argv: a }) => {
      const { identities, seed, keep } = loadDemoConfig(a);
      mkdirSync(".data", { recursive: true });
      const dataDir = mkdtempSync(join(".data", "demo-"));
      const global = loadGlobalConfig({ ...a, "data-dir": dataDir, "database-url": undefined }, {});
      const source = loadSourceConfig({}, {});
      const handle = await openDatabase(global, logger);
      // Loaded here: the sandbox (fastify, the schema validator) costs every other command's start-up.
      const { startSandbox } = await import("../sandbox/index.ts");
      // The platform migrates by itself meanwhile (issue 27): its legacy fields drifted from the
      // source for 5% of identities, and its background migration runs, so the reports show the
      // three-way table and what the platform will still do.
      const sandbox = await startSandbox({
        port: 0,
        tokenRateLimitRps: 1,
        rateLimitRps: 50,
        legacyDriftFraction: 0.05,
        autoMigrateRate: 50,
      });
      try {
        await ensureSchema(handle.db, logger);
        const seeded = await seedSource(handle.db, source, {
          identities,
          seed,
          withAnomalies: true,
        });
        const report = sandbox.seedIdentities(syntheticIdentities(identities, seed), {
          migratedFraction: 0.5,
          driftFraction: 0.03,
          seed,
        });
        logger.info(
          `Seeded ${seeded.rowsWritten} source rows (${Object.values(seeded.anomalies).reduce((x, y) => x + y, 0)} bad) in ${resolve(dataDir)}; sandbox holds ${report.identities} identities, ${report.migrated} already migrated, ${report.driftIdentities} with drift, ${report.legacyDrift.on + report.legacyDrift.off} whose platform legacy fields differ from the source; the platform's own migration runs at 50 identities a second`,
        );
        const seededDuplicates = sandbox.stats().integrity.identitiesWithDuplicateClientSellOnly;
        const platform = loadPlatformConfig(
          {
            "api-url": sandbox.apiUrl,
            "token-url": sandbox.tokenUrl,
            "client-id": sandbox.credentials.clientId,
          },
          { OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret },
        );
        const pipeline = loadPipelineConfig({ reason: "controls-migrate demo" }, {});
        // One session, three runs: the demo answers every confirmation itself.
        const session = { configs: { source, platform, pipeline }, global, handle, logger, signal };
        const summaries = [];
        for (const mode of ["plan", "apply", "reconcile"] as const) {
          if (signal.aborted) break;
          const { summary } = await runWiredPipeline(session, { mode, confirm: async () => true });
          summaries.push(summary);
          process.stderr.write(`\n${renderSummaryTable(summary)}\n`);
          process.stderr.write(`  open: ${join(summary.reports.dir, "report.html")}\n\n`);
        }
        const last = summaries[summaries.length - 1];
        // A create answered 404 named an identity the platform does not know (the filtered
        // strategy learns that only then): a bad row to report, not client-side work left.
        const notOnPlatform = last?.outcomes["failed:identity_not_found"] ?? 0;
        const leftover = Math.max(0, (last?.findings.missing_client_control ?? 0) - notOnPlatform);
        const stats = sandbox.stats();
        process.stdout.write(
          `${JSON.stringify({
            reports: summaries.map((s) => s.reports.dir),
            report_html: summaries.map((s) => join(s.reports.dir, "report.html")),
            final_missing_client_controls: leftover,
            final_identities_not_on_platform: notOnPlatform,
            final_exit_code: last?.exit_code,
            // Duplicates seeded as drift are reported (duplicate_client_control); the tool adds none.
            duplicates_seeded_as_drift: seededDuplicates,
            duplicates_created_by_tool:
              stats.integrity.identitiesWithDuplicateClientSellOnly - seededDuplicates,
          })}\n`,
        );
        logger.info(
          leftover === 0
            ? "Final reconcile: no client-side work left. What remains is report-only (platform-owned controls, drift, bad rows)."
            : `Final reconcile still sees ${leftover} missing client controls`,
        );
        return leftover === 0 ? ExitCode.ok : ExitCode.actionsFailed;
      } finally {
        await sandbox.close();
        await handle.close();
        if (keep) logger.info(`Kept the demo database in ${resolve(dataDir)} (--keep)`);
        else rmSync(dataDir, { recursive: true, force: true });
      }
    }),
};
