/**
 * `npm run demo`: a whole migration rehearsed on embedded defaults (a fresh PGlite folder and an
 * in-process sandbox from the workspace package `controls-sandbox`), no server and no network:
 * plan → apply --yes → reconcile, run by the CLI's own pipeline. The throwaway database folder is
 * removed at the end unless --keep is given. A repository script, not a command of the product:
 * the product does not carry the sandbox.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { startSandbox } from "controls-sandbox";
import yargs from "yargs";
import { hideBin } from "yargs/helpers";
import { runWiredPipeline } from "../src/commands/pipeline-wiring.ts";
import { runCommand } from "../src/commands/run-command.ts";
import {
  type Argv as ConfigArgv,
  demoOptions,
  globalOptions,
  loadDemoConfig,
  loadGlobalConfig,
  loadPipelineConfig,
  loadPlatformConfig,
  loadSourceConfig,
  withOptions,
} from "../src/config.ts";
import {
  PLATFORM_RATE_LIMIT_RPS,
  syntheticIdentities,
  TOKEN_RATE_LIMIT_RPS,
} from "../src/contract/index.ts";
import { type DatabaseHandle, openDatabase } from "../src/db/connection/connect.ts";
import { ensureSchema } from "../src/db/connection/migrate.ts";
import { seedSource } from "../src/db/source/seed.ts";
import { ExitCode } from "../src/errors.ts";
import type { Logger } from "../src/log.ts";
import { renderSummaryTable } from "../src/reports/summary.ts";

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;
type Summary = Awaited<ReturnType<typeof runWiredPipeline>>["summary"];

/** Seeds the source relation (bad rows included) and the sandbox with the same identities. */
async function seedBoth(
  handle: DatabaseHandle,
  sandbox: Sandbox,
  demo: { identities: number; seed: number; dataDir: string },
  logger: Logger,
): Promise<void> {
  await ensureSchema(handle.db, logger);
  const seeded = await seedSource(handle.db, loadSourceConfig({}, {}), {
    identities: demo.identities,
    seed: demo.seed,
    withAnomalies: true,
  });
  const report = sandbox.seedIdentities(syntheticIdentities(demo.identities, demo.seed), {
    migratedFraction: 0.5,
    driftFraction: 0.03,
    seed: demo.seed,
  });
  const bad = Object.values(seeded.anomalies).reduce((x, y) => x + y, 0);
  logger.info(
    `Seeded ${seeded.rowsWritten} source rows (${bad} bad) in ${resolve(demo.dataDir)}; sandbox holds ${report.identities} identities, ${report.migrated} already migrated, ${report.driftIdentities} with drift, ${report.legacyDrift.on + report.legacyDrift.off} whose platform legacy fields differ from the source; the platform's own migration runs at 50 identities a second`,
  );
}

/** Prints the demo's verdict (and its JSON line with --json); returns the exit code. */
function conclude(
  summaries: Summary[],
  sandbox: Sandbox,
  seededDuplicates: number,
  logger: Logger,
  json: boolean,
) {
  const last = summaries[summaries.length - 1];
  // A create answered 404 named an identity the platform does not know (the filtered
  // strategy learns that only then): a bad row to report, not client-side work left.
  const notOnPlatform = last?.outcomes["failed:identity_not_found"] ?? 0;
  const leftover = Math.max(0, (last?.findings.missing_client_control ?? 0) - notOnPlatform);
  const stats = sandbox.stats();
  // On a terminal the tables say it all; the object is for scripts (--json).
  if (json)
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
      ? "Final reconcile: every missing client control is created. What is left is to read or decide in the report (drift, bad rows, platform-owned findings); the demo prunes nothing."
      : `Final reconcile still sees ${leftover} missing client controls`,
  );
  return leftover === 0 ? ExitCode.ok : ExitCode.actionsFailed;
}

/** The demo itself, as a command body: its exit code is set by `runCommand`. */
function demo(argv: ConfigArgv): Promise<void> {
  return runCommand(argv, async ({ logger, signal, argv: a }) => {
    const { identities, seed, keep } = loadDemoConfig(a);
    mkdirSync(".data", { recursive: true });
    const dataDir = mkdtempSync(join(".data", "demo-"));
    const global = loadGlobalConfig({ ...a, "data-dir": dataDir, "database-url": undefined }, {});
    const handle = await openDatabase(global, logger);
    // The platform migrates by itself meanwhile: its legacy fields drifted from the source for 5%
    // of identities, and its background migration runs, so the reports show the three-way table
    // and what the platform will still do.
    const sandbox = await startSandbox({
      port: 0,
      tokenRateLimitRps: TOKEN_RATE_LIMIT_RPS,
      rateLimitRps: PLATFORM_RATE_LIMIT_RPS,
      legacyDriftFraction: 0.05,
      autoMigrateRate: 50,
    });
    try {
      await seedBoth(handle, sandbox, { identities, seed, dataDir }, logger);
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
      const source = loadSourceConfig({}, {});
      // One session, three runs: the demo answers every confirmation itself.
      const session = { configs: { source, platform, pipeline }, global, handle, logger, signal };
      const summaries: Summary[] = [];
      for (const mode of ["plan", "apply", "reconcile"] as const) {
        if (signal.aborted) break;
        const { summary } = await runWiredPipeline(session, { mode, confirm: async () => true });
        summaries.push(summary);
        process.stderr.write(`\n${renderSummaryTable(summary)}\n\n`);
      }
      return conclude(summaries, sandbox, seededDuplicates, logger, global.json);
    } finally {
      await sandbox.close();
      await handle.close();
      if (keep) logger.info(`Kept the demo database in ${resolve(dataDir)} (--keep)`);
      else rmSync(dataDir, { recursive: true, force: true });
    }
  });
}

await withOptions(
  withOptions(
    yargs(hideBin(process.argv))
      .scriptName("npm run demo --")
      .parserConfiguration({ "camel-case-expansion": false, "parse-numbers": false })
      .usage(
        "$0 [options]\n\nRehearse a whole migration on an embedded database and an in-process sandbox (no network).",
      )
      .strict()
      .help()
      .version(false),
    globalOptions,
    "Global options:",
  ),
  demoOptions,
  "Demo:",
)
  .example("$0", "10,000 identities, half-finished transition with drift and bad rows")
  .example("$0 --identities 50000 --no-progress", "Bigger, with line logs")
  .command("$0", false, {}, (argv) => demo(argv))
  .parseAsync();
