import cliProgress from "cli-progress";
import type { Logger } from "../log.ts";

/** A phase's progress: a live bar on a TTY, a log line every few seconds elsewhere, or nothing. */
export interface Progress {
  start(phase: string, total: number | null): void;
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
    start: (phase, total) => (signal.aborted ? undefined : inner.start(phase, total)),
    tick: (n) => inner.tick(n),
    stop: () => inner.stop(),
  };
}

function barProgress(): Progress {
  let bar: cliProgress.SingleBar | null = null;
  let done = 0;
  let startedAt = 0;
  return {
    start(phase, total) {
      this.stop();
      done = 0;
      startedAt = Date.now();
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
    },
    tick(n = 1) {
      if (!bar) return;
      done += n;
      const rate = done / Math.max(0.001, (Date.now() - startedAt) / 1000);
      if (bar.getTotal() < done) bar.setTotal(done);
      bar.update(done, { rate: rate.toFixed(0) });
    },
    stop() {
      bar?.stop();
      bar = null;
    },
  };
}

function lineProgress(logger: Logger, intervalMs: number): Progress {
  let phase = "";
  let total: number | null = null;
  let done = 0;
  let started = 0;
  let timer: NodeJS.Timeout | null = null;
  const report = () => {
    const elapsed = (Date.now() - started) / 1000;
    const rate = done / Math.max(0.001, elapsed);
    const pct = total ? ` (${((100 * done) / Math.max(1, total)).toFixed(1)}%)` : "";
    const eta = total && rate > 0 ? `, ETA ${Math.max(0, (total - done) / rate).toFixed(0)} s` : "";
    logger.info(`${phase}: ${done}${total ? `/${total}` : ""}${pct}, ${rate.toFixed(0)}/s${eta}`);
  };
  return {
    start(p, t) {
      this.stop();
      phase = p;
      total = t;
      done = 0;
      started = Date.now();
      timer = setInterval(report, intervalMs);
      timer.unref();
    },
    tick(n = 1) {
      done += n;
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
