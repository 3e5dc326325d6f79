/**
 * The local channel of an embedded (PGlite) database before and after a run writes: while it
 * reads the source and the platform's state (a revert: its journal, and what a crash left in
 * doubt), and while it writes its reports, `status`, `runs`,
 * `show` and `report` from a second terminal cannot open the data folder the run holds. This keeps
 * the status file fresh and answers their read requests from the run's own database handle, as
 * the executor's `RunControl` does while it writes; it is suspended meanwhile, so that one poller
 * owns the channel at a time. A steering request is answered that the run does not write yet.
 */
import type { Kysely } from "kysely";
import { getRun } from "../../db/journal/run-queries.ts";
import type { Database } from "../../db/schema.ts";
import type { Logger } from "../../log.ts";
import { LocalChannel } from "./local-channel.ts";
import { answerLocalReads } from "./local-reads.ts";
import { readRunStatus } from "./run-status.ts";

/** How often requests are taken; the status file is rewritten every {@link STATUS_MS}. */
const POLL_MS = 250;
const STATUS_MS = 1_000;

/**
 * Serves the channel of `dataDir` for run `runId` until `stop()`.
 *
 * @example
 *   const reads = new ReadStageChannel(db, runId, ".data/pglite", logger);
 *   await reads.suspend(); await executeActions(ctx, n); reads.resume();
 *   await reads.stop();
 */
export class ReadStageChannel {
  readonly #channel: LocalChannel;
  #timer: NodeJS.Timeout | undefined;
  #busy: Promise<void> = Promise.resolve();
  #suspended = false;
  #stopped = false;
  #statusAt = 0;

  private readonly db: Kysely<Database>;
  private readonly runId: string;
  private readonly logger: Logger;

  constructor(db: Kysely<Database>, runId: string, dataDir: string, logger: Logger) {
    this.db = db;
    this.runId = runId;
    this.logger = logger;
    this.#channel = new LocalChannel(dataDir);
    this.#schedule(0);
  }

  /** Hands the channel to the executor's `RunControl`: waits for a poll under way. */
  async suspend(): Promise<void> {
    this.#suspended = true;
    await this.#busy;
  }

  /** Takes the channel back once the writes are over. */
  resume(): void {
    this.#suspended = false;
    this.#statusAt = 0;
  }

  /**
   * Rewrites the status file now, with the stage just noted, rather than at the next second's
   * poll: a hand-over from the writes' server leaves no second in which `status` has no file.
   */
  async publishNow(): Promise<void> {
    await this.#busy;
    this.#statusAt = 0;
    this.#busy = this.#poll();
    await this.#busy;
  }

  /** Stops serving; the status file goes, so `status` reads the database's final word. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#busy;
    if (!this.#suspended) this.#channel.close();
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#busy = this.#poll().finally(() => this.#schedule(POLL_MS));
    }, ms);
    // The run's own work keeps the process alive; this never should on its own.
    this.#timer.unref();
  }

  async #poll(): Promise<void> {
    if (this.#suspended || this.#stopped) return;
    try {
      const channel = this.#channel;
      if (Date.now() - this.#statusAt >= STATUS_MS) {
        const run = await getRun(this.db, this.runId);
        if (run) await channel.writeStatus({ ...(await readRunStatus(this.db, run, new Date())) });
        this.#statusAt = Date.now();
      }
      const { requests } = channel.takeRequests();
      for (const change of await answerLocalReads(channel, this.db, this.logger, requests)) {
        await channel.reply(change, {
          ok: false,
          message: `Run ${this.runId} is not writing now (it reads the source, the platform's state or the journal to revert, or writes its reports): pause, continue and set-rate act while it writes.`,
        });
      }
    } catch (err) {
      this.logger.debug(`Local channel poll failed: ${(err as Error).message}`);
    }
  }
}
