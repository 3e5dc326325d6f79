import { prng } from "../shared.ts";
import type { Faults } from "../types.ts";

export const DEFAULT_FAULTS: Faults = Object.freeze({
  latencyMs: 0,
  latencyJitterMs: 0,
  failRate: 0,
  hangRate: 0,
  ambiguousRate: 0,
});

/** Throws a RangeError naming the field when a fault setting is out of range. */
export function checkFaults(f: Partial<Faults>): void {
  for (const k of ["failRate", "hangRate", "ambiguousRate"] as const) {
    const v = f[k];
    if (v !== undefined && !(typeof v === "number" && v >= 0 && v <= 1)) {
      throw new RangeError(`${k} must be between 0 and 1, got ${v}`);
    }
  }
  for (const k of ["latencyMs", "latencyJitterMs"] as const) {
    const v = f[k];
    if (v !== undefined && !(typeof v === "number" && Number.isFinite(v) && v >= 0)) {
      throw new RangeError(`${k} must be a number of milliseconds >= 0, got ${v}`);
    }
  }
}

const FAIL_STATUSES = [500, 502, 503] as const;

/**
 * Draws the injected faults from a seeded PRNG, so a run with the same seed and the same request
 * order meets the same faults. Counts what it injected.
 *
 * @example
 *   const faults = new FaultInjector({ failRate: 0.1 }, 1);
 *   const status = faults.drawFail(); // 500 | 502 | 503 | undefined
 */
export class FaultInjector {
  private current: Faults;
  private rand: () => number;
  readonly counts = { latency: 0, fail5xx: 0, hang: 0, ambiguous: 0 };

  constructor(initial: Partial<Faults>, seed: number) {
    checkFaults(initial);
    this.current = { ...DEFAULT_FAULTS, ...stripUndefined(initial) };
    this.rand = prng(seed ^ 0x5bd1e995);
  }

  get settings(): Faults {
    return { ...this.current };
  }

  set(f: Partial<Faults>): void {
    checkFaults(f);
    this.current = { ...this.current, ...stripUndefined(f) };
  }

  /** True when any fault at all is configured; lets the hot path skip every draw. */
  get active(): boolean {
    const f = this.current;
    return (
      f.latencyMs > 0 ||
      f.latencyJitterMs > 0 ||
      f.failRate > 0 ||
      f.hangRate > 0 ||
      f.ambiguousRate > 0
    );
  }

  /** Milliseconds to delay this answer (fixed plus uniform jitter). */
  drawLatency(): number {
    const { latencyMs, latencyJitterMs } = this.current;
    const ms = latencyMs + (latencyJitterMs > 0 ? this.rand() * latencyJitterMs : 0);
    if (ms > 0) this.counts.latency++;
    return ms;
  }

  drawHang(): boolean {
    const hit = this.current.hangRate > 0 && this.rand() < this.current.hangRate;
    if (hit) this.counts.hang++;
    return hit;
  }

  drawFail(): 500 | 502 | 503 | undefined {
    if (!(this.current.failRate > 0 && this.rand() < this.current.failRate)) return undefined;
    this.counts.fail5xx++;
    return FAIL_STATUSES[Math.floor(this.rand() * FAIL_STATUSES.length)] ?? 500;
  }

  drawAmbiguous(): boolean {
    const hit = this.current.ambiguousRate > 0 && this.rand() < this.current.ambiguousRate;
    if (hit) this.counts.ambiguous++;
    return hit;
  }

  resetCounts(): void {
    this.counts.latency = 0;
    this.counts.fail5xx = 0;
    this.counts.hang = 0;
    this.counts.ambiguous = 0;
  }
}

export function stripUndefined<T extends object>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  }
  return out;
}
