/**
 * Surviving a lost PostgreSQL connection (a killed backend, a server restart, a failover): work
 * that failed because its connection went away is run again on a fresh connection, with backoff,
 * until the connection is back or `--db-retry-s` have passed since it was lost.
 */
import { backoffDelayMs, sleep } from "../../backoff.ts";
import { UserError } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import { describeConnectionLoss, isConnectionLoss } from "./pg-errors.ts";

/** What the run should do once the database is back, when the caller knows no better. */
const DEFAULT_HINT =
  "Once the database is back, `controls-migrate runs` shows the run as interrupted: continue an apply or reconcile with --resume RUN_ID (the id is in the 'Run … started' line above), or run a plan again.";

/**
 * The connection stayed lost for longer than `--db-retry-s`. A `UserError`: the CLI prints the
 * message alone (no stack trace) and exits 1. Nothing more is sent to the platform after it.
 *
 * @example
 *   throw lost.withHint("Resume with: controls-migrate apply --resume 20261123-101500-ab12");
 */
export class DatabaseLostError extends UserError {
  readonly lostAt: Date;
  readonly #init: DatabaseLostInit;

  constructor(init: DatabaseLostInit) {
    super(
      `Lost the database connection at ${init.lostAt.toISOString()} (${init.target}) and could not get it back within ${init.retryS} s (--db-retry-s): ${init.reason}. ${init.hint ?? DEFAULT_HINT}`,
    );
    this.lostAt = init.lostAt;
    this.#init = init;
  }

  /** The same loss with a more precise "what now" (e.g. the exact resume command). */
  withHint(hint: string): DatabaseLostError {
    return new DatabaseLostError({ ...this.#init, hint });
  }
}

interface DatabaseLostInit {
  readonly lostAt: Date;
  readonly target: string;
  readonly retryS: number;
  readonly reason: string;
  readonly hint?: string;
}

export interface ReconnectOptions {
  /** Give up this many seconds after the connection was lost (--db-retry-s). */
  readonly retryS: number;
  readonly logger: Logger;
  /** Where the database is, for messages: `PostgreSQL host:port/name`; never a password. */
  readonly target: string;
  /** Backoff between attempts; defaults 100 ms base, 5 s cap. */
  readonly baseMs?: number;
  readonly capMs?: number;
}

/** Waited on before each unit of work; rejects to stop all database work (e.g. the lock was taken). */
export type Gate = () => Promise<void>;

/**
 * One per open PostgreSQL database. Every unit of work (a statement, a transaction) goes through
 * {@link Reconnector.run}; an outage is logged once when it starts and once when it ends, and all
 * units share its deadline.
 *
 * @example
 *   const reconnect = new Reconnector({ retryS: 60, logger, target: "PostgreSQL db:5432/app" });
 *   const rows = await reconnect.run(() => pool.query("select 1"));
 */
export class Reconnector {
  readonly #o: ReconnectOptions;
  #down: { since: number; reason: string } | undefined;
  #gate: Gate | undefined;

  constructor(options: ReconnectOptions) {
    this.#o = options;
  }

  get options(): ReconnectOptions {
    return this.#o;
  }

  /** True while the connection is known to be lost. */
  get down(): boolean {
    return this.#down !== undefined;
  }

  /** Installs (or with no argument removes) the gate every gated unit waits on first. */
  setGate(gate?: Gate): void {
    this.#gate = gate;
  }

  /**
   * Runs `work`; when it fails because the connection was lost, runs it again (after a backoff)
   * until it succeeds or `retryS` seconds have passed since the loss, then throws a
   * {@link DatabaseLostError}. Errors of the work itself are thrown at once. `work` must be safe to
   * run again after a loss: a statement that failed with its connection was not committed, except
   * in the instant between the server's commit and its answer, so writes are idempotent.
   */
  async run<T>(work: () => Promise<T>, options: { gated?: boolean } = {}): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      if (options.gated !== false) await this.#gate?.();
      const started = Date.now();
      try {
        const result = await work();
        this.#recovered(started);
        return result;
      } catch (err) {
        if (!isConnectionLoss(err)) throw err;
        const down = this.#lost(err);
        const left = down.since + this.#o.retryS * 1000 - Date.now();
        if (left <= 0) {
          throw new DatabaseLostError({
            lostAt: new Date(down.since),
            target: this.#o.target,
            retryS: this.#o.retryS,
            reason: describeConnectionLoss(err),
          });
        }
        const delay = backoffDelayMs(attempt, {
          baseMs: this.#o.baseMs ?? 100,
          capMs: this.#o.capMs ?? 5_000,
        });
        await sleep(Math.min(Math.max(delay, 10), left));
      }
    }
  }

  #lost(err: unknown): { since: number; reason: string } {
    if (!this.#down) {
      this.#down = { since: Date.now(), reason: describeConnectionLoss(err) };
      this.#o.logger.warn(
        `Lost the database connection (${this.#down.reason}); retrying for up to ${this.#o.retryS} s (--db-retry-s).`,
      );
    }
    return this.#down;
  }

  /** Only work begun after the loss proves the connection is back (older work may have raced it). */
  #recovered(started: number): void {
    if (!this.#down || started < this.#down.since) return;
    const s = Math.round((Date.now() - this.#down.since) / 100) / 10;
    this.#down = undefined;
    this.#o.logger.info(`Database connection back after ${s} s; continuing.`);
  }
}
