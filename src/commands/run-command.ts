import { type Argv, type GlobalConfig, loadGlobalConfig } from "../config.ts";
import { ExitCode, UserError } from "../errors.ts";
import { createLogger, type Logger } from "../log.ts";

/** What every command handler receives: the compiled global options, a logger, a cancel signal. */
export interface CommandContext {
  readonly argv: Argv;
  readonly global: GlobalConfig;
  readonly logger: Logger;
  /** Aborted on the first SIGINT/SIGTERM; commands stop cleanly and keep what they wrote. */
  readonly signal: AbortSignal;
}

/**
 * Runs one command body and turns its outcome into an exit code. The only place that maps errors
 * to exit codes and prints them: a UserError prints its message; anything else prints its message
 * and, with --log-level debug, its stack.
 */
export async function runCommand(
  argv: Argv,
  body: (ctx: CommandContext) => Promise<number>,
): Promise<void> {
  const controller = new AbortController();
  let interrupts = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    interrupts += 1;
    if (interrupts > 1) {
      process.stderr.write(`\nSecond ${sig}: exiting now.\n`);
      process.exit(ExitCode.interrupted);
    }
    process.stderr.write(
      `\n${sig} received: finishing in-flight work and stopping (press again to force).\n`,
    );
    controller.abort(new Error(`interrupted by ${sig}`));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  let logger: Logger = createLogger({ level: "info" });
  let debug = false;
  try {
    const global = loadGlobalConfig(argv);
    logger = createLogger({ level: global.logLevel });
    debug = global.logLevel === "debug";
    const code = await body({ argv, global, logger, signal: controller.signal });
    process.exitCode =
      controller.signal.aborted && code === ExitCode.ok ? ExitCode.interrupted : code;
  } catch (err) {
    if (err instanceof UserError) {
      logger.error(err.message);
    } else if (controller.signal.aborted) {
      logger.error(`Stopped: ${(err as Error).message}. The run can be resumed.`);
      process.exitCode = ExitCode.interrupted;
      return;
    } else {
      logger.error(err instanceof Error ? err.message : String(err));
    }
    if (debug && err instanceof Error && err.stack) logger.debug(err.stack);
    process.exitCode = ExitCode.failed;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
