import cliProgress from "cli-progress";
import type { Logger } from "../../log.ts";
import { progressCount, RateMeter } from "./progress-rate.ts";

/** What a phase's progress may know beyond its total. */
export interface PhaseOptions {
  /** The budget in force (requests/s), read at each refresh: the rate shown never exceeds it. */
  readonly rateCap?: () => number | null;
}

/** A phase's progress: a live bar on a TTY, a log line every few seconds elsewhere, or nothing. */
export interface Progress {
  start(phase: string, total: number | null, options?: PhaseOptions): void;
  tick(n?: number): void;
  stop(): void;
}

export interface ProgressOptions {
  readonly enabled: boolean;
  readonly logger: Logger;
  /**
   * The command's cancel signal: on abort the bar is stopped at once (before anything else is
   * printed, so no message lands on the bar's line) and no later phase starts one.
   */
  readonly signal?: AbortSignal;
  /** Whether stderr is a terminal; defaults to `process.stderr.isTTY`. */
  readonly tty?: boolean;
  readonly intervalMs?: number;
}

const silent: Progress = { start() {}, tick() {}, stop() {} };

/**
 * Progress on stderr: a bar on a terminal, a log line every `intervalMs` otherwise, or nothing.
 *
 * @example
 *   const progress = createProgress({ enabled: true, logger, signal });
 *   progress.start("apply", 1000); progress.tick(); progress.stop();
 */
export function createProgress(options: ProgressOptions): Progress {
  if (!options.enabled) return silent;
  const tty = options.tty ?? Boolean(process.stderr.isTTY);
  const inner = tty ? barProgress() : lineProgress(options.logger, options.intervalMs ?? 5000);
  const { signal } = options;
  if (!signal) return inner;
  // Registered first, so it runs before the listeners that print about the interruption.
  signal.addEventListener("abort", () => inner.stop(), { once: true });
  return {
    start: (phase, total, o) => (signal.aborted ? undefined : inner.start(phase, total, o)),
    tick: (n) => inner.tick(n),
    stop: () => inner.stop(),
  };
}

/** The bar's figures are refreshed this often even without a tick (a pause, a set-rate). */
const BAR_REFRESH_MS = 500;

function barProgress(): Progress {
  let bar: cliProgress.SingleBar | null = null;
  let done = 0;
  let meter = new RateMeter(Date.now());
  let cap: () => number | null = () => null;
  let timer: NodeJS.Timeout | null = null;
  const refresh = () => {
    if (!bar) return;
    if (bar.getTotal() < done) bar.setTotal(done);
    bar.update(done, { rate: meter.perSecond(Date.now(), cap()).toFixed(0) });
  };
  return {
    start(phase, total, o) {
      this.stop();
      done = 0;
      meter = new RateMeter(Date.now());
      cap = o?.rateCap ?? (() => null);
      bar = new cliProgress.SingleBar(
        {
          stream: process.stderr,
          format: `${phase.padEnd(12)} {bar} {value}/{total} | {rate}/s | ETA {eta_formatted}`,
          etaBuffer: 50,
          hideCursor: true,
          clearOnComplete: false,
        },
        cliProgress.Presets.shades_classic,
      );
      bar.start(total ?? 0, 0, { rate: "0" });
      timer = setInterval(refresh, BAR_REFRESH_MS);
      timer.unref();
    },
    tick(n = 1) {
      if (!bar) return;
      done += n;
      meter.add(n, Date.now());
      refresh();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
      bar?.stop();
      bar = null;
    },
  };
}

function lineProgress(logger: Logger, intervalMs: number): Progress {
  let phase = "";
  let total: number | null = null;
  let done = 0;
  let meter = new RateMeter(Date.now());
  let cap: () => number | null = () => null;
  let timer: NodeJS.Timeout | null = null;
  const report = () => {
    const rate = meter.perSecond(Date.now(), cap());
    const left = total === null ? 0 : Math.max(0, total - done);
    const eta = total && rate > 0 && left > 0 ? `, ETA ${(left / rate).toFixed(0)} s` : "";
    logger.info(`${phase}: ${progressCount(done, total)}, ${rate.toFixed(0)}/s${eta}`);
  };
  return {
    start(p, t, o) {
      this.stop();
      phase = p;
      total = t;
      done = 0;
      meter = new RateMeter(Date.now());
      cap = o?.rateCap ?? (() => null);
      timer = setInterval(report, intervalMs);
      timer.unref();
    },
    tick(n = 1) {
      done += n;
      meter.add(n, Date.now());
    },
    stop() {
      if (timer) {
        clearInterval(timer);
        timer = null;
        if (done > 0) report();
      }
    },
  };
}
