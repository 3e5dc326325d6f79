import type { PlatformErrorKind } from "./platform-error.ts";
import type { EndpointBudgetState } from "./rate-budget.ts";
import { type RequestSecond, RequestSeries, type SeriesCounter } from "./request-series.ts";

const MIN_MS = 0.25;
const FACTOR = 1.1;
const BUCKETS = 150; // 0.25 ms · 1.1^149 ≈ 360 s: past any timeout
const LOG_FACTOR = Math.log(FACTOR);

/**
 * Latency histogram in fixed memory: 150 geometric buckets, each 10% wider than the last, so a
 * percentile is exact to within 10% whatever the run length.
 *
 * @example
 *   const h = new LatencyHistogram(); h.record(12.3); h.percentile(0.95)
 */
export class LatencyHistogram {
  readonly #counts = new Uint32Array(BUCKETS);
  #count = 0;
  #max = 0;

  record(ms: number): void {
    const v = Math.max(ms, 0);
    const i = v <= MIN_MS ? 0 : Math.min(BUCKETS - 1, Math.ceil(Math.log(v / MIN_MS) / LOG_FACTOR));
    this.#counts[i] = (this.#counts[i] ?? 0) + 1;
    this.#count += 1;
    if (v > this.#max) this.#max = v;
  }

  get count(): number {
    return this.#count;
  }

  /** Upper edge of the bucket holding the q-quantile (never above the largest value seen). */
  percentile(q: number): number | null {
    if (this.#count === 0) return null;
    const rank = Math.max(1, Math.ceil(q * this.#count));
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.#counts[i] ?? 0;
      if (seen >= rank) {
        // The last bucket is open-ended: its edge says nothing about what fell into it.
        return round(i === BUCKETS - 1 ? this.#max : Math.min(this.#max, MIN_MS * FACTOR ** i));
      }
    }
    return round(this.#max);
  }

  get max(): number | null {
    return this.#count === 0 ? null : round(this.#max);
  }
}

const round = (n: number) => Math.round(n * 10) / 10;

export interface EndpointMetrics {
  /** HTTP exchanges attempted (each retry and each replay counts). */
  readonly requests: number;
  /** Sends repeated after a retryable or ambiguous failure (backoff retries). */
  readonly retries: number;
  /** Sends repeated once after a 401 with a fresh token. */
  readonly authReplays: number;
  readonly rateLimited: number;
  readonly ambiguous: number;
  /** Items the platform served twice within one page (dropped, logged as platform anomalies). */
  readonly anomalies: number;
  /** Failed exchanges by kind (each attempt counts, including ones later retried). */
  readonly errors: Partial<Record<PlatformErrorKind, number>>;
  /** Exchanges by HTTP status (`"200"`, `"429"`), or by failure when none came (`"timeout"`). */
  readonly statuses: Record<string, number>;
  readonly latencyMs: { count: number; p50: number | null; p95: number | null; max: number | null };
}

export interface ClientMetrics {
  /** Keyed by method + path template, e.g. `POST /v2/identity/controls`. */
  readonly endpoints: Record<string, EndpointMetrics>;
  readonly token: { requests: number; issued: number; errors: number };
  /** Rate budget per path template (current rate after any 429, penalties so far). */
  readonly budgets: Record<string, EndpointBudgetState>;
  /** All endpoints together, per second with activity, oldest first (report.html's timeline). */
  readonly series: RequestSecond[];
}

/**
 * One endpoint's counters. The four the timeline shows are accessors: each increment is also
 * counted in the client's per-second series, so the HTTP code only ever does `m.requests += 1`.
 */
class MutableEndpoint {
  readonly #series: RequestSeries;
  readonly #counts: Record<SeriesCounter, number> = {
    requests: 0,
    rateLimited: 0,
    retries: 0,
    ambiguous: 0,
  };
  authReplays = 0;
  anomalies = 0;
  errors: Partial<Record<PlatformErrorKind, number>> = {};
  statuses: Record<string, number> = {};
  latency = new LatencyHistogram();

  constructor(series: RequestSeries) {
    this.#series = series;
  }

  #set(counter: SeriesCounter, value: number): void {
    this.#series.add(counter, value - this.#counts[counter]);
    this.#counts[counter] = value;
  }

  get requests(): number {
    return this.#counts.requests;
  }
  set requests(v: number) {
    this.#set("requests", v);
  }
  get rateLimited(): number {
    return this.#counts.rateLimited;
  }
  set rateLimited(v: number) {
    this.#set("rateLimited", v);
  }
  get retries(): number {
    return this.#counts.retries;
  }
  set retries(v: number) {
    this.#set("retries", v);
  }
  get ambiguous(): number {
    return this.#counts.ambiguous;
  }
  set ambiguous(v: number) {
    this.#set("ambiguous", v);
  }
}

/** Counters behind `PlatformClient.metrics()`; updating one is a map lookup and an add. */
export class MetricsRecorder {
  readonly #endpoints = new Map<string, MutableEndpoint>();
  readonly #series: RequestSeries;
  readonly token = { requests: 0, issued: 0, errors: 0 };

  constructor(series: RequestSeries = new RequestSeries()) {
    this.#series = series;
  }

  endpoint(key: string): MutableEndpoint {
    let m = this.#endpoints.get(key);
    if (!m) {
      m = new MutableEndpoint(this.#series);
      this.#endpoints.set(key, m);
    }
    return m;
  }

  /** Counts one exchange's answer: its HTTP status, or the failure kind when none came. */
  status(key: string, status: number | string): void {
    const m = this.endpoint(key);
    const k = String(status);
    m.statuses[k] = (m.statuses[k] ?? 0) + 1;
  }

  error(key: string, kind: PlatformErrorKind): void {
    const m = this.endpoint(key);
    m.errors[kind] = (m.errors[kind] ?? 0) + 1;
  }

  snapshot(budgets: Record<string, EndpointBudgetState>): ClientMetrics {
    const endpoints: Record<string, EndpointMetrics> = {};
    for (const [key, m] of this.#endpoints) {
      endpoints[key] = {
        requests: m.requests,
        retries: m.retries,
        authReplays: m.authReplays,
        rateLimited: m.rateLimited,
        ambiguous: m.ambiguous,
        anomalies: m.anomalies,
        errors: { ...m.errors },
        statuses: { ...m.statuses },
        latencyMs: {
          count: m.latency.count,
          p50: m.latency.percentile(0.5),
          p95: m.latency.percentile(0.95),
          max: m.latency.max,
        },
      };
    }
    return { endpoints, token: { ...this.token }, budgets, series: this.#series.snapshot() };
  }
}
