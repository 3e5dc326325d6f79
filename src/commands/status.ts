/**
 * `status [RUN_ID] [--watch]`: what a writer run is doing, from another terminal. On PostgreSQL it
 * reads the tool's schema (any machine that reaches the database); on PGlite, whose data folder a
 * running writer owns, it reads the status file the writer keeps beside it (`local-channel.ts`),
 * and opens the database only when no live run wrote that file.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Argv, CommandModule } from "yargs";
import {
  type Argv as ConfigArgv,
  type GlobalConfig,
  loadStatusConfig,
  statusOptions,
  withOptions,
} from "../config.ts";
import type { DatabaseHandle } from "../db/connection/connect.ts";
import { ExitCode, UserError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { readFreshStatus } from "../migration/steer/local-channel.ts";
import type { RunStatusView } from "../migration/steer/run-status.ts";
import { renderRunStatus } from "../reports/run-status-text.ts";
import { exitCodesEpilogue } from "./exit-codes.ts";
import { type CommandContext, runCommand } from "./run-command.ts";

const WATCH_EVERY_MS = 2_000;
/** How long `status` waits on PGlite for a run that is closing to let go of the data folder. */
const CLOSING_WAIT_MS = 10_000;

/** Reads one run's status; keeps the database open between reads of a `--watch`. */
class StatusReader {
  #handle: DatabaseHandle | undefined;

  private readonly global: GlobalConfig;
  private readonly logger: Logger;
  private readonly runId: string | undefined;

  constructor(global: GlobalConfig, logger: Logger, runId: string | undefined) {
    this.global = global;
    this.logger = logger;
    this.runId = runId;
  }

  /** PGlite: the running process's status file, when it is fresh and of the run asked for. */
  #live(): RunStatusView | undefined {
    if (this.global.databaseUrl) return undefined;
    const live = readFreshStatus(this.global.dataDir);
    return live && (!this.runId || live.run_id === this.runId)
      ? (live as unknown as RunStatusView)
      : undefined;
  }

  async read(): Promise<RunStatusView> {
    const live = this.#live();
    if (live) return live;
    const once = this.global.databaseUrl && !this.#handle ? await this.#readOnce() : undefined;
    if (once) return once;
    const opened = await this.#open();
    if (!("db" in opened)) return opened;
    const handle = opened;
    const { getRun, latestWriterRun } = await import("../db/journal/run-queries.ts");
    const { readRunStatus } = await import("../migration/steer/run-status.ts");
    const run = this.runId ? await getRun(handle.db, this.runId) : await latestWriterRun(handle.db);
    if (!run) throw this.#noRun();
    const view = await readRunStatus(handle.db, run, new Date());
    // PGlite: let a run that starts meanwhile open the folder.
    if (!this.global.databaseUrl) await this.close();
    return view;
  }

  #noRun(): UserError {
    return new UserError(
      this.runId
        ? `No run "${this.runId}". List runs with: controls-migrate runs`
        : "No apply, reconcile or revert has run on this database yet.",
    );
  }

  /**
   * PostgreSQL: one connection, one statement (`db/connection/status-query.ts`), and no kysely
   * loaded on the way. Undefined when that cannot answer (no schema yet, another version's schema, no
   * connection): the usual open then creates or upgrades the schema, or says what is wrong.
   */
  async #readOnce(): Promise<RunStatusView | undefined> {
    const [{ readStatusOnce }, { reportMarkedInterrupted }] = await Promise.all([
      import("../db/connection/status-query.ts"),
      import("../db/connection/interrupted-runs.ts"),
    ]);
    const read = await readStatusOnce(this.global.databaseUrl as string, this.runId).catch(
      () => undefined,
    );
    if (!read) return undefined;
    reportMarkedInterrupted(this.logger, read.marked);
    if (!read.run) throw this.#noRun();
    // Only a run to show loads its view (`migration/steer/run-status.ts`, which still brings
    // kysely).
    const { runStatusView } = await import("../migration/steer/run-status.ts");
    return runStatusView(read.run, read.counts, read.control, new Date());
  }

  async #open(): Promise<DatabaseHandle | RunStatusView> {
    if (this.#handle) return this.#handle;
    const { ensureSchema } = await import("../db/connection/migrate.ts");
    const handle = await this.#openSoon();
    if (!("db" in handle)) return handle;
    try {
      await ensureSchema(handle.db, this.logger);
    } catch (err) {
      await handle.close();
      throw err;
    }
    this.#handle = handle;
    return handle;
  }

  /**
   * PGlite: a run that just stopped writing still holds the data folder while it closes (its status
   * file is gone by then), or hands its status file from one stage's server to the next; wait a
   * little for the folder or for the file to come back, rather than fail.
   */
  async #openSoon(): Promise<DatabaseHandle | RunStatusView> {
    const deadline = Date.now() + (this.global.databaseUrl ? 0 : CLOSING_WAIT_MS);
    const { openDatabase } = await import("../db/connection/connect.ts");
    for (;;) {
      try {
        // Its own wait below also looks for a running run's status file coming back.
        return await openDatabase(this.global, this.logger, { busyWaitMs: 0 });
      } catch (err) {
        if (!(err instanceof UserError) || Date.now() >= deadline) throw err;
        await sleep(250);
        const live = this.#live();
        if (live) return live;
      }
    }
  }

  async close(): Promise<void> {
    const h = this.#handle;
    this.#handle = undefined;
    await h?.close();
  }
}

async function status(ctx: CommandContext): Promise<number> {
  const { argv, global, logger, signal } = ctx;
  const { watch } = loadStatusConfig(argv);
  const runId = argv["run-id"] === undefined ? undefined : String(argv["run-id"]);
  const reader = new StatusReader(global, logger, runId);
  const tty = process.stdout.isTTY === true && !global.json;
  try {
    for (;;) {
      const view = await reader.read();
      const text = global.json ? JSON.stringify(view) : renderRunStatus(view);
      // On a terminal a watch redraws in place; elsewhere each refresh is one more block (or line).
      if (watch && tty) process.stdout.write("\x1b[H\x1b[2J");
      process.stdout.write(`${text}\n${watch && !global.json && !tty ? "\n" : ""}`);
      if (!watch || view.status !== "running" || signal.aborted) break;
      await sleep(WATCH_EVERY_MS, undefined, { signal }).catch(() => {});
      if (signal.aborted) break;
    }
  } finally {
    await reader.close();
  }
  // Ctrl-C stops the watching, never the run: that is a normal end.
  return signal.aborted ? ExitCode.interrupted : ExitCode.ok;
}

/** `status [RUN_ID]`. */
export const statusCommand: CommandModule = {
  command: "status [run-id]",
  describe:
    "Show a writer run (the latest, or the one named): status, progress, write rate, ETA, 429s, paused or not, rate budget. Works from another terminal while it runs.",
  builder: (y: Argv) =>
    withOptions(
      y.positional("run-id", {
        type: "string",
        describe: "The run, as listed by `controls-migrate runs`; default: the latest writer run.",
      }),
      statusOptions,
      "Status:",
    )
      .example("$0 status", "The latest apply/reconcile/revert")
      .example("$0 status --watch", "Refresh every 2 s until it ends")
      .example("$0 status 20261122-101500-cd34 --json", "One JSON object, for scripts")
      .epilogue(exitCodesEpilogue("status")),
  // Ctrl-C ends the watching only: nothing of the run's is stopped, so nothing says it is.
  handler: (argv) =>
    runCommand(argv as ConfigArgv, status, {
      interruptNotice: "stopped watching; the run goes on.",
    }),
};
