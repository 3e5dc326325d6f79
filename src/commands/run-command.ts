import { type Argv, type GlobalConfig, loadGlobalConfig, preloadSecretFile } from "../config.ts";
import { ExitCode, Interrupted } from "../errors.ts";
import { createLogger, type Logger } from "../log.ts";

/** What every command handler receives: the compiled global options, a logger, a cancel signal. */
export interface CommandContext {
  readonly argv: Argv;
  readonly global: GlobalConfig;
  readonly logger: Logger;
  /** Aborted on the first SIGINT/SIGTERM/SIGHUP; commands stop cleanly and keep what they wrote. */
  readonly signal: AbortSignal;
  /** Tells which run the command works on, so that a failure can name it (`--json`: `run_id`). */
  readonly noteRun: (runId: string) => void;
}

/**
 * Runs one command body and turns its outcome into an exit code. The only place that maps errors
 * to exit codes and prints them: an error prints its message (a UserError names what to fix), and
 * with --log-level debug its stack; an Interrupted also prints the command that resumes, last.
 * With --json a failure also prints one `{"error": {...}}` object on stdout.
 */
export async function runCommand(
  argv: Argv,
  body: (ctx: CommandContext) => Promise<number>,
  options: { readonly interruptNotice?: string } = {},
): Promise<void> {
  const controller = new AbortController();
  let interrupts = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    interrupts += 1;
    if (interrupts > 1) {
      process.stderr.write(`\nSecond ${sig}: exiting now.\n`);
      process.exit(ExitCode.interrupted);
    }
    // Abort first: its listeners stop the progress bar before this message is printed.
    controller.abort(new Error(`interrupted by ${sig}`));
    notice(
      `\n${sig} received: ${options.interruptNotice ?? "finishing in-flight work and stopping (press again to force)."}`,
    );
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  // A closed terminal (or `kill -HUP`) stops a run as SIGTERM does: recorded, resumable.
  process.on("SIGHUP", onSignal);

  let logger: Logger = createLogger({ level: "info" });
  let debug = false;
  let runId: string | undefined;
  // With --log-format json, stderr holds JSON lines only: the command's own notices go through it.
  let notice = (text: string): void => {
    process.stderr.write(`${text}\n`);
  };
  try {
    const global = loadGlobalConfig(argv);
    // Read ahead with a timeout, while SIGINT/SIGTERM are heard: config loading is synchronous.
    await preloadSecretFile(argv["client-secret-file"], controller.signal);
    logger = createLogger({
      level: global.logLevel,
      format: global.logFormat,
      context: () => (runId ? { run_id: runId } : {}),
    });
    if (global.logFormat === "json") notice = (text) => logger.warn(text.trim());
    debug = global.logLevel === "debug";
    const noteRun = (id: string) => {
      runId = id;
    };
    const code = await body({ argv, global, logger, signal: controller.signal, noteRun });
    process.exitCode =
      controller.signal.aborted && code === ExitCode.ok ? ExitCode.interrupted : code;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const interrupted = err instanceof Interrupted || controller.signal.aborted;
    const exitCode = interrupted ? ExitCode.interrupted : ExitCode.failed;
    if (argv.json === true) {
      const error = { message, exit_code: exitCode, ...(runId ? { run_id: runId } : {}) };
      process.stdout.write(`${JSON.stringify({ error })}\n`);
    }
    if (err instanceof Interrupted) {
      logger.error(message);
      if (err.resumeCommand) notice(`Resume with: ${err.resumeCommand}`);
    } else if (interrupted) {
      logger.error(`Stopped: ${message}.`);
    } else {
      logger.error(message);
      if (debug && err instanceof Error && err.stack) logger.debug(err.stack);
    }
    process.exitCode = exitCode;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    process.off("SIGHUP", onSignal);
  }
}
