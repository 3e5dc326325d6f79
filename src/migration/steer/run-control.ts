/**
 * A running writer's side of steering (issue 14). Every {@link POLL_MS} it reads the run's control
 * row (PostgreSQL and PGlite alike; on PGlite it first takes the requests of the local channel and
 * records them there), checks the throttle file and the daily window, and opens or closes the
 * write gate the executor awaits before each write; a new rate budget goes to the platform client's
 * write path. Once a second it reports what only it knows (write rate, 429s, holds) to the
 * database, and on PGlite rewrites the status file.
 */
import { existsSync } from "node:fs";
import { insideWindow, nextWindowChange } from "../../daily-window.ts";
import {
  acknowledgeRunControl,
  currentRequester,
  getRunControl,
  lastRunEvent,
  type Requester,
  recordRunEvent,
  requestRunControl,
  saveRunReport,
} from "../../db/journal/run-control-queries.ts";
import { getRun } from "../../db/journal/run-queries.ts";
import type { RunControlRow } from "../../db/schema.ts";
import { PATHS } from "../../platform/index.ts";
import { WriteGate } from "../execute/write-gate.ts";
import type { LocalRequest } from "./local-channel.ts";
import { answerLocalReads, type LocalChangeRequest } from "./local-reads.ts";
import { RATE_WINDOW_MS } from "./progress-rate.ts";
import type { ActionControl, RunControlSettings } from "./run-control-types.ts";
import { type LiveReport, readRunStatus } from "./run-status.ts";
import { describeChange } from "./steering-words.ts";

export type { ActionControl, RunControlSettings } from "./run-control-types.ts";

/** How often the control row, the throttle file and the window are looked at. */
export const POLL_MS = 250;
const REPORT_MS = 1_000;
/** stop() waits this long at most for a poll caught in a database outage. */
const STOP_WAIT_MS = 3_000;

/**
 * @example
 *   const control = await RunControl.start({ db, runId, client, logger, rate: 40, concurrency: 8, hold });
 *   try { await executeActions({ ...ctx, control }, n); } finally { await control.stop(); }
 */
export class RunControl implements ActionControl {
  readonly gate: WriteGate;
  readonly #s: RunControlSettings;
  readonly #now: () => Date;
  readonly #me: Requester = currentRequester();
  readonly #done: number[] = [];
  #rate: number;
  #appliedVersion = 0;
  #writingSince: number | undefined;
  #lastReport = 0;
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<void> | undefined;
  #stopped = false;

  private constructor(s: RunControlSettings) {
    this.#s = s;
    this.#now = s.now ?? (() => new Date());
    this.#rate = s.rate;
    this.gate = new WriteGate(s.concurrency, s.rate);
  }

  /** Starts watching; the run's stored state (a pause, a rate) is applied before this resolves. */
  static async start(s: RunControlSettings): Promise<RunControl> {
    const control = new RunControl(s);
    await control.#poll();
    control.#schedule();
    return control;
  }

  noteWritesStarted(): void {
    this.#writingSince ??= this.#now().getTime();
  }

  noteDone(): void {
    const t = this.#now().getTime();
    this.#done.push(t);
    while (this.#done.length > 0 && (this.#done[0] as number) <= t - RATE_WINDOW_MS)
      this.#done.shift();
  }

  budget(): number {
    return this.#s.client.metrics().budgets[PATHS.controls]?.rate ?? this.#rate;
  }

  /** What only this process knows, as `status` shows it. */
  liveReport(): LiveReport {
    const now = this.#now().getTime();
    const since = this.#writingSince ?? now;
    const windowS = Math.min(RATE_WINDOW_MS, Math.max(1000, now - since)) / 1000;
    const recent = this.#done.filter((t) => t > now - RATE_WINDOW_MS).length;
    const m = this.#s.client.metrics();
    const requests = { rate_limited: 0, retries: 0, ambiguous: 0 };
    for (const e of Object.values(m.endpoints)) {
      requests.rate_limited += e.rateLimited;
      requests.retries += e.retries;
      requests.ambiguous += e.ambiguous;
    }
    return {
      rate_per_s: this.#writingSince === undefined ? 0 : recent / windowS,
      paused: !this.gate.isOpen,
      held_by: this.gate.holds,
      rate_budget: this.budget(),
      requests,
      stage: "writing",
    };
  }

  /** Stops watching; the last report (and status file) shows how the run ended. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, STOP_WAIT_MS).unref());
    await Promise.race([this.#polling, timeout]);
    await this.#publish([]).catch(() => {});
    this.#s.channel?.close();
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#polling = this.#poll().finally(() => this.#schedule());
    }, POLL_MS);
    // Not unref'd: while the write gate is closed (paused, throttled, outside the window) this
    // timer may be all that keeps the process alive. With PGlite in an unref'd thread and no
    // socket open, Node would otherwise see an empty event loop and exit (code 13) mid-run.
    // stop() clears it.
  }

  async #poll(): Promise<void> {
    const answered: { request: LocalRequest; message: string; ok: boolean }[] = [];
    try {
      const { channel, db, logger } = this.#s;
      for (const request of await answerLocalReads(
        channel,
        db,
        logger,
        this.#takeLocalRequests(),
      )) {
        answered.push(await this.#recordLocalRequest(request));
      }
      const row = await getRunControl(this.#s.db, this.#s.runId);
      if (row && row.version > this.#appliedVersion) await this.#apply(row);
      await this.#watchThrottleFile();
      await this.#watchWindow();
      const due = this.#now().getTime() - this.#lastReport >= REPORT_MS;
      if (due || answered.length > 0) await this.#publish(answered);
    } catch (err) {
      // The database may be away: the executor meets that too and says so; keep the gate as is.
      this.#s.logger.debug(`Run control poll failed: ${(err as Error).message}`);
    }
  }

  #takeLocalRequests(): LocalRequest[] {
    if (!this.#s.channel) return [];
    const { requests, dropped } = this.#s.channel.takeRequests();
    for (const name of dropped) this.#s.logger.warn(`Ignored a stale steering request (${name}).`);
    return requests;
  }

  async #recordLocalRequest(request: LocalChangeRequest) {
    if (request.runId && request.runId !== this.#s.runId) {
      const message = `Run ${request.runId} is not the run going on this database; run ${this.#s.runId} is.`;
      return { request, message, ok: false };
    }
    await requestRunControl(this.#s.db, this.#s.runId, request.change, request.by);
    const row = await getRunControl(this.#s.db, this.#s.runId);
    if (row && row.version > this.#appliedVersion) await this.#apply(row);
    return { request, message: describeChange(this.#s.runId, request.change), ok: true };
  }

  async #apply(row: RunControlRow): Promise<void> {
    const { db, runId, logger } = this.#s;
    const held = this.gate.holds.length > 0;
    if (row.paused && !this.gate.has("pause")) {
      const by = await lastRunEvent(db, runId, "pause");
      const who = by
        ? `${by.who} (pid ${by.pid}) at ${by.at.toISOString()}`
        : "controls-migrate pause";
      this.gate.hold("pause", `paused by ${who}`);
      logger.warn(
        `Run ${runId} paused by ${who}: no new write is sent; requests in flight finish. Continue with: controls-migrate continue ${runId}`,
      );
    } else if (!row.paused && this.gate.has("pause")) {
      const by = await lastRunEvent(db, runId, "continue");
      this.gate.release("pause");
      logger.info(
        `Run ${runId} continued${by ? ` by ${by.who} (pid ${by.pid})` : ""}${this.gate.isOpen ? "" : `; writes stay held: ${this.gate.holds.join("; ")}`}.`,
      );
    }
    const rateChanged = row.rate_budget !== null && row.rate_budget !== this.#rate;
    if (row.rate_budget !== null && rateChanged) {
      this.#s.client.setRate(PATHS.controls, row.rate_budget);
      this.gate.setRate(row.rate_budget);
      logger.info(
        `Run ${runId}'s write budget: ${row.rate_budget} requests/s (was ${this.#rate}).`,
      );
      this.#rate = row.rate_budget;
    }
    // Report, then acknowledge: `status` after `set-rate`/`pause` returned shows the change.
    if (rateChanged || held !== this.gate.holds.length > 0) {
      await this.#saveReport();
      this.#lastReport = 0; // and the status file at this poll
    }
    await acknowledgeRunControl(db, runId, row.version);
    this.#appliedVersion = row.version;
  }

  async #watchThrottleFile(): Promise<void> {
    const path = this.#s.hold.throttleFile;
    if (!path) return;
    const exists = existsSync(path);
    const key = "throttle";
    if (exists === this.gate.has(key)) return;
    if (exists) {
      this.gate.hold(key, `throttle file ${path} exists`);
      this.#s.logger.warn(
        `Throttle file ${path} exists: no new write is sent until it is removed.`,
      );
    } else {
      this.gate.release(key);
      this.#s.logger.info(`Throttle file ${path} removed: writing again.`);
    }
    await recordRunEvent(
      this.#s.db,
      this.#s.runId,
      exists ? "throttle_on" : "throttle_off",
      this.#me,
      path,
    );
  }

  async #watchWindow(): Promise<void> {
    const w = this.#s.hold.pauseOutside;
    if (!w) return;
    const now = this.#now();
    const outside = !insideWindow(w, now);
    const key = "window";
    if (outside === this.gate.has(key)) return;
    const next = nextWindowChange(w, now);
    if (outside) {
      const words = `outside the write window ${w.text} (it opens at ${next.toString()})`;
      this.gate.hold(key, words);
      this.#s.logger.warn(`Writes held: ${words}.`);
    } else {
      this.gate.release(key);
      this.#s.logger.info(`Inside the write window ${w.text} (until ${next.toString()}): writing.`);
    }
    await recordRunEvent(
      this.#s.db,
      this.#s.runId,
      outside ? "window_closed" : "window_open",
      this.#me,
      w.text,
    );
  }

  async #saveReport(): Promise<LiveReport> {
    this.#lastReport = this.#now().getTime();
    const report = this.liveReport();
    await saveRunReport(this.#s.db, this.#s.runId, { ...report });
    return report;
  }

  /** Reports to the database, rewrites the status file, and answers the local requests. */
  async #publish(answered: { request: LocalRequest; message: string; ok: boolean }[]) {
    const { db, runId, channel } = this.#s;
    await this.#saveReport();
    if (!channel) return;
    const run = await getRun(db, runId);
    // The file's rate as of its writing, not of the report above: a busy database (PGlite queues
    // these reads behind the run's writes) can take seconds to answer the reads between.
    const status = run
      ? await readRunStatus(db, run, this.#now, () => this.liveReport())
      : undefined;
    if (status) await channel.writeStatus({ ...status });
    for (const a of answered) {
      await channel.reply(a.request, {
        ok: a.ok,
        message: a.message,
        ...(status ? { status: { ...status } } : {}),
      });
    }
  }
}
