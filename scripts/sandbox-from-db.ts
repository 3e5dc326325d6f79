/**
 * `npm run sandbox:from-db -- [flags]`: the sandbox (workspace package `controls-sandbox`) serving
 * the valid identities of your source relation, read by the CLI's own source reader (so it
 * serves exactly the ids the tool accepts). A repository script: it needs both the CLI and the
 * sandbox, and the product carries only the CLI. Anomalous rows are counted, not served.
 */
import {
  type SandboxLog,
  SandboxUsageError,
  type SeedIdentity,
  sandboxOptions,
  sandboxOptionsFromArgv,
  serveSandbox,
} from "controls-sandbox";
import yargs from "yargs";
import { hideBin } from "yargs/helpers";
import { type CommandContext, runCommand } from "../src/commands/run-command.ts";
import {
  type Argv,
  globalOptions,
  loadSourceConfig,
  sourceOptions,
  withOptions,
} from "../src/config.ts";
import { openDatabase } from "../src/db/connection/connect.ts";
import { readSource } from "../src/db/source/source-reader.ts";
import { ExitCode, UserError } from "../src/errors.ts";

/** Reads the valid rows of the configured source relation; anomalous rows are counted, not seeded. */
async function identitiesFromDb(
  ctx: CommandContext,
): Promise<{ rows: SeedIdentity[]; skipped: number }> {
  const source = loadSourceConfig(ctx.argv);
  const handle = await openDatabase(ctx.global, ctx.logger);
  const rows: SeedIdentity[] = [];
  let skipped = 0;
  try {
    for await (const batch of readSource(handle.db, source, {
      signal: ctx.signal,
      logger: ctx.logger,
    })) {
      for (const r of batch.rows) {
        if (
          r.valid &&
          r.identityId !== null &&
          r.userDisabled !== null &&
          r.adminDisabled !== null
        ) {
          rows.push({
            id: r.identityId,
            user_disabled: r.userDisabled,
            admin_disabled: r.adminDisabled,
          });
        } else skipped++;
      }
    }
  } finally {
    // Released before serving, so the migration tool can open the same (PGlite) database.
    await handle.close();
  }
  return { rows, skipped };
}

/** Set once the sandbox served and stopped on a signal: its normal end. */
let stoppedBySignal = false;

async function serve(ctx: CommandContext): Promise<number> {
  let options: ReturnType<typeof sandboxOptionsFromArgv>;
  try {
    options = sandboxOptionsFromArgv(ctx.argv);
  } catch (err) {
    throw err instanceof SandboxUsageError ? new UserError(err.message) : err;
  }
  const fromDb = await identitiesFromDb(ctx);
  ctx.logger.info(`read ${fromDb.rows.length} identities from the source relation`, {
    skipped_anomalous_rows: fromDb.skipped,
  });
  const log: SandboxLog = (message, fields) => ctx.logger.info(message, fields);
  try {
    await serveSandbox(options, { signal: ctx.signal, identities: fromDb.rows, log });
    stoppedBySignal = true;
  } catch (err) {
    throw err instanceof SandboxUsageError ? new UserError(err.message) : err;
  }
  return ExitCode.ok;
}

await withOptions(
  withOptions(
    withOptions(
      yargs(hideBin(process.argv))
        .scriptName("npm run sandbox:from-db --")
        .parserConfiguration({ "camel-case-expansion": false, "parse-numbers": false })
        .usage("$0 [options]\n\nServe the identities of your source relation from the sandbox.")
        .strict()
        .help()
        .version(false),
      globalOptions,
      "Database options:",
    ),
    sourceOptions,
    "Source options:",
  ),
  // --identities is the bin's; here the identities come from the database.
  Object.fromEntries(Object.entries(sandboxOptions).filter(([k]) => k !== "identities")),
  "Sandbox options:",
)
  .example(
    "$0 --database-url postgres://127.0.0.1/app --source-relation legacy.users",
    "Serve the identities of legacy.users",
  )
  .command("$0", false, {}, async (argv) => {
    await runCommand(argv as Argv, serve);
    // runCommand reports a signal as "interrupted" (130); for a server, stopping on a signal is
    // its normal end, so a clean stop exits 0.
    if (stoppedBySignal && process.exitCode === ExitCode.interrupted) {
      process.exitCode = ExitCode.ok;
    }
  })
  .parseAsync();
