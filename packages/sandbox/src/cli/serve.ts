import type { CommandModule, Argv as Yargs } from "yargs";
import { type Argv, loadSourceConfig, sourceOptions, withOptions } from "../config.ts";
import { openDatabase } from "../db/connect.ts";
import { readSource } from "../db/source-reader.ts";
import { ExitCode, UserError } from "../errors.ts";
import type { Sandbox, SeedIdentity } from "../sandbox/index.ts";
import { type CommandContext, runCommand } from "./run-command.ts";
import { sandboxFlags, sandboxOptionsFromArgv } from "./sandbox-options.ts";

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

const shellQuote = (v: string) => `'${v.replaceAll("'", "'\\''")}'`;

/**
 * Ready-to-paste shell lines that point controls-migrate at this sandbox. They carry the sandbox's
 * own throwaway client secret, as the JSON line on stdout does; nothing else is logged with it.
 */
export function exportLines(sandbox: Sandbox): string {
  return [
    "# To point controls-migrate at this sandbox, paste:",
    `export API_BASE_URL=${shellQuote(sandbox.apiUrl)}`,
    `export OAUTH_TOKEN_URL=${shellQuote(sandbox.tokenUrl)}`,
    `export OAUTH_CLIENT_ID=${shellQuote(sandbox.credentials.clientId)}`,
    `export OAUTH_CLIENT_SECRET=${shellQuote(sandbox.credentials.clientSecret)}`,
    "",
  ].join("\n");
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

async function serve(ctx: CommandContext, state: { stoppedBySignal: boolean }): Promise<number> {
  const options = sandboxOptionsFromArgv(ctx.argv);
  let fromDb: { rows: SeedIdentity[]; skipped: number } | undefined;
  if (ctx.argv["from-db"] === true) {
    fromDb = await identitiesFromDb(ctx);
    ctx.logger.info(`read ${fromDb.rows.length} identities from the source relation`, {
      skipped_anomalous_rows: fromDb.skipped,
    });
  }
  if (options.identities) {
    ctx.logger.info(
      `seeding ${options.identities} synthetic identities (seed ${options.seed ?? 1})`,
    );
  }
  let sandbox: Sandbox;
  try {
    // Loaded here: the sandbox (fastify, the schema validator) costs every other command's start-up.
    const { startSandbox } = await import("../sandbox/index.ts");
    sandbox = await startSandbox(options);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL") {
      throw new UserError(
        `--host ${options.host} --port ${options.port} cannot be bound (${code}); pick another --port, or --port 0 for any free one.`,
      );
    }
    throw err;
  }
  if (fromDb) {
    const report = sandbox.seedIdentities(fromDb.rows);
    ctx.logger.info("seeded identities from the database", { ...report });
  }
  const stats = sandbox.stats();
  // A local emulator printing its own throwaway secrets on stdout is intended: callers read them.
  process.stdout.write(
    `${JSON.stringify({
      api_url: sandbox.apiUrl,
      token_url: sandbox.tokenUrl,
      admin_url: sandbox.adminUrl,
      client_id: sandbox.credentials.clientId,
      client_secret: sandbox.credentials.clientSecret,
      read_only_client_id: sandbox.credentials.readOnlyClientId,
      read_only_client_secret: sandbox.credentials.readOnlyClientSecret,
    })}\n`,
  );
  process.stderr.write(exportLines(sandbox));
  ctx.logger.info(`sandbox listening on ${sandbox.apiUrl} (admin ${sandbox.adminUrl})`, {
    identities: stats.identities,
    active_controls: stats.controls.active,
  });
  await untilAborted(ctx.signal);
  await sandbox.close();
  state.stoppedBySignal = true;
  ctx.logger.info("sandbox stopped");
  return ExitCode.ok;
}

export const sandboxCommand: CommandModule = {
  command: "sandbox",
  describe: "Run the local emulator of the platform interface.",
  builder: (y: Yargs) =>
    withOptions(
      y.options(sandboxFlags).group(Object.keys(sandboxFlags), "Sandbox options:"),
      sourceOptions,
      "Source options (with --from-db):",
    )
      .example(
        "$0 sandbox --identities 100000",
        "100,000 synthetic identities, half of the flagged ones migrated",
      )
      .example(
        "$0 sandbox --port 0 --rate-limit 0 --token-rate-limit 0",
        "A free port, no rate limits (benchmarks)",
      )
      .example(
        "$0 sandbox --identities 10000 --drift-fraction 0.05 --fail-rate 0.02 --ambiguous-rate 0.01 --latency-ms 20",
        "Drifted data and a flaky platform",
      )
      .example(
        "$0 sandbox --from-db --database-url postgres://127.0.0.1/app",
        "Serve the identities of your source relation",
      )
      .epilogue(
        "Prints one JSON line on stdout (api_url, token_url, admin_url, client ids and secrets) once ready, then ready-to-paste export lines (API_BASE_URL, OAUTH_TOKEN_URL, OAUTH_CLIENT_ID, OAUTH_CLIENT_SECRET) on stderr; logs go to stderr. Stops on SIGINT/SIGTERM with exit code 0.",
      ),
  handler: async (argv) => {
    const state = { stoppedBySignal: false };
    await runCommand(argv as Argv, (ctx) => serve(ctx, state));
    // runCommand reports a signal as "interrupted" (130); for a server, stopping on a signal is
    // its normal end, so a clean stop exits 0.
    if (state.stoppedBySignal && process.exitCode === ExitCode.interrupted) {
      process.exitCode = ExitCode.ok;
    }
  },
};
