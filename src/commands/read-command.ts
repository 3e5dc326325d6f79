/**
 * Runs a read command (`runs`, `show`, `report`) on the database, or, on PGlite while a writer
 * holds the data folder (one process only), through that writer's local channel.
 */
import type { GlobalConfig } from "../config.ts";
import { openDatabase } from "../db/connection/connect.ts";
import { ensureSchema } from "../db/connection/migrate.ts";
import { currentRequester } from "../db/journal/run-control-queries.ts";
import { ExitCode, UserError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { readFreshStatus, sendLocalRequest } from "../migration/steer/local-channel.ts";
import { type ReadRequest, readCommandText } from "../migration/steer/read-commands.ts";

/** How long a read waits for the running writer's answer (a large report takes a while). */
const READ_WAIT_MS = 120_000;

/**
 * Prints what the read command `request` prints; returns its exit code.
 *
 * @example
 *   return runReadCommand(global, logger, { command: "runs", limit: 20, json: false });
 */
export async function runReadCommand(
  global: GlobalConfig,
  logger: Logger,
  request: ReadRequest,
): Promise<number> {
  if (!global.databaseUrl && readFreshStatus(global.dataDir)) {
    const reply = await sendLocalRequest(
      global.dataDir,
      { read: request, by: currentRequester() },
      READ_WAIT_MS,
    );
    if (reply) {
      if (!reply.ok) throw new UserError(reply.message);
      process.stdout.write(reply.stdout ?? "");
      return ExitCode.ok;
    }
    // Nobody answered: the run just ended, or hangs; opening the folder says which.
  }
  const handle = await openDatabase(global, logger);
  try {
    await ensureSchema(handle.db, logger);
    process.stdout.write(await readCommandText(handle.db, request));
    return ExitCode.ok;
  } finally {
    await handle.close();
  }
}
