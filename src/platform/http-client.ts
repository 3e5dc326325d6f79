import { inspect } from "node:util";
import pLimit, { type LimitFunction } from "p-limit";
import { backoffDelayMs, sleep } from "../backoff.ts";
import { MAX_RESPONSE_BYTES, tooLargeDetail } from "./bounded-body.ts";
import { type CallState, cancelledError, stillAmbiguous } from "./call-state.ts";
import { buildUrl, exchange, type Outcome, readJson } from "./http-exchange.ts";
import type { HttpClientDeps, Reply, RequestSpec } from "./http-request-types.ts";
import { LinkedSignal } from "./linked-signal.ts";

/** The signal a write on the wire listens to: none aborts it but its own timeout. */
const NEVER_ABORTED = new AbortController().signal;

import { waitTooLong } from "./max-wait.ts";
import {
  type Classification,
  classify,
  PlatformError,
  type PlatformErrorKind,
} from "./platform-error.ts";
import { parseRetryAfter } from "./problem-details.ts";
import { statusError } from "./status-error.ts";

const PENALISED = Symbol("penalised");
const CANCELLED = Symbol("cancelled");
const AGAIN = Symbol("again");

/** Failures that mean the address itself is wrong or down: the message names the flag. */
const UNREACHABLE = /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH)\b/;

/**
 * Every API call goes through here: bearer token, per-endpoint rate budget, bounded concurrency,
 * per-request timeout, one replay after a 401, retries with backoff for what is safe to repeat,
 * and typed errors for the rest. Knows HTTP, nothing about identities.
 *
 * @example
 *   const reply = await http.send({ method: "GET", template: PATHS.controls, path: PATHS.controls,
 *     query: { identity_id: id } });
 */
export class HttpClient {
  readonly #d: HttpClientDeps;
  readonly #limit: LimitFunction;

  constructor(deps: HttpClientDeps) {
    this.#d = deps;
    this.#limit = pLimit(deps.config.concurrency);
  }

  get inFlight(): number {
    return this.#limit.activeCount;
  }

  get queued(): number {
    return this.#limit.pendingCount;
  }

  async send(spec: RequestSpec): Promise<Reply> {
    // Every wait of the call (penalty, token, slot, backoff) listens on this call's own signal, so
    // the client's and the run's long-lived signals carry one listener each, not one per request.
    const call = new LinkedSignal([this.#d.signal, spec.signal]);
    const key = `${spec.method} ${spec.template}`;
    this.#d.patience.begin(key);
    try {
      return await this.#send(spec, call.signal);
    } finally {
      this.#d.patience.end(key);
      call.dispose();
    }
  }

  async #send(spec: RequestSpec, signal: AbortSignal): Promise<Reply> {
    const { config, tokens, budget, metrics } = this.#d;
    const key = `${spec.method} ${spec.template}`;
    const url = buildUrl(config.apiUrl, spec);
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const call: CallState = { key, attempts: 0, failures: 0, replayed: false, hadAmbiguous: false };
    const latency = metrics.endpoint(key).latency;
    // A write on the wire finishes (bounded by its timeout) when the run is cancelled: its answer
    // is recorded as it is, not left in doubt. A cancel stops every wait before a send.
    const onWire = spec.method === "GET" ? signal : NEVER_ABORTED;
    const send = (token: string) => () =>
      exchange(url, spec.method, token, body, config.timeoutMs, onWire, latency, () =>
        budget.sent(spec.template),
      );
    for (;;) {
      if (signal.aborted) throw this.#cancelled(spec, call, false);
      try {
        await budget.waitOpen(spec.template, signal);
      } catch {
        throw this.#cancelled(spec, call, false);
      }
      // After the penalty wait: a token fetched before a five-minute pause could be stale.
      let token: string;
      try {
        token = await tokens.get(signal);
      } catch (err) {
        throw call.hadAmbiguous && err instanceof PlatformError
          ? stillAmbiguous(err, call.attempts)
          : err;
      }
      const outcome = await this.#inSlot(spec, key, signal, send(token));
      if (outcome === PENALISED) continue;
      if (outcome === CANCELLED) throw this.#cancelled(spec, call, false);
      call.attempts += 1;
      metrics.status(key, "failure" in outcome ? outcome.failure.kind : outcome.status);
      this.#notePatience(key, outcome);
      const verdict = this.#judge(spec, call, outcome, token);
      if (verdict === AGAIN) continue;
      if (!(verdict instanceof PlatformError)) return verdict;
      await this.#failed(spec, call, verdict, signal);
    }
  }

  /**
   * One send in a concurrency slot. The slot is taken after the penalty wait, so a penalised
   * endpoint never holds slots that other endpoints could use (a penalty starting meanwhile
   * releases the bucket's waiters). The bucket wait is inside the slot, so a grant is followed by
   * the send at once; granting first and then queueing for a slot would let sends bunch up.
   */
  #inSlot(
    spec: RequestSpec,
    key: string,
    signal: AbortSignal,
    send: () => Promise<Outcome>,
  ): Promise<Outcome | typeof PENALISED | typeof CANCELLED> {
    const { budget, metrics } = this.#d;
    return this.#limit(async () => {
      if (signal.aborted) return CANCELLED;
      try {
        if (!(await budget.take(spec.template, signal))) return PENALISED;
      } catch {
        return CANCELLED;
      }
      metrics.endpoint(key).requests += 1;
      // The budget counts the real send, not the grant (see TokenBucket's trackSends).
      return send();
    });
  }

  /** What one answer means: the reply, an error to weigh, or `AGAIN` (a 401 replay, a 429). */
  #judge(
    spec: RequestSpec,
    call: CallState,
    outcome: Outcome,
    token: string,
  ): Reply | PlatformError | typeof AGAIN {
    const { key } = call;
    if ("tooLarge" in outcome) {
      return this.#error(key, "protocol", spec.method === "GET" ? "fatal" : "ambiguous", {
        status: outcome.status,
        detail: tooLargeDetail(outcome.tooLarge, MAX_RESPONSE_BYTES),
      });
    }
    if ("failure" in outcome) {
      const f = outcome.failure;
      if (f.kind === "cancelled") throw this.#cancelled(spec, call, f.sent);
      return this.#error(key, f.kind, classify(f.kind, spec.method, f.sent), {
        detail:
          f.kind === "timeout"
            ? `no answer within ${this.#d.config.timeoutMs} ms (--timeout-ms)`
            : `connection failed (${this.#d.redactor.scrub(f.summary)})${UNREACHABLE.test(f.summary) ? "; check --api-url" : ""}`,
        cause: new Error(this.#d.redactor.scrub(f.summary)),
      });
    }
    if (outcome.status >= 200 && outcome.status < 300) {
      const parsed = readJson(outcome.text);
      if (parsed.ok) {
        return {
          status: outcome.status,
          body: parsed.value,
          attempts: call.attempts,
          afterAmbiguousAttempt: call.hadAmbiguous,
        };
      }
      // A write answered 2xx was committed, but we cannot read what it created.
      return this.#error(key, "protocol", spec.method === "GET" ? "fatal" : "ambiguous", {
        status: outcome.status,
        detail: "the response body is not valid JSON",
      });
    }
    if (outcome.status === 401 && !call.replayed) {
      // Expired early, revoked or rotated: one fresh token, one replay (a 401 was not processed).
      call.replayed = true;
      this.#d.metrics.endpoint(key).authReplays += 1;
      this.#d.metrics.error(key, "unauthorized");
      this.#d.tokens.invalidate(token);
      return AGAIN;
    }
    if (outcome.status === 429) {
      this.#rateLimited(key, spec.template, outcome.retryAfter, call.attempts);
      return AGAIN;
    }
    return statusError(this.#d.redactor, key, spec, outcome, call.replayed, this.#d.config.apiUrl);
  }

  /** A failed attempt: thrown when it may not or need not be repeated, else a backoff wait. */
  async #failed(
    spec: RequestSpec,
    call: CallState,
    error: PlatformError,
    signal: AbortSignal,
  ): Promise<void> {
    const { config, metrics } = this.#d;
    const m = metrics.endpoint(call.key);
    // Only two 401s in a row are fatal: a later revocation (after a retry) earns a fresh replay.
    if (error.kind !== "unauthorized") call.replayed = false;
    metrics.error(call.key, error.kind);
    if (error.classification === "ambiguous") {
      m.ambiguous += 1;
      call.hadAmbiguous = true;
    }
    const again =
      error.classification === "retryable" ||
      (error.classification === "ambiguous" && spec.retryAmbiguous === true);
    call.failures += 1;
    if (!again || call.failures >= config.maxAttempts) {
      throw call.hadAmbiguous
        ? stillAmbiguous(error, call.attempts)
        : error.with({ attempts: call.attempts });
    }
    m.retries += 1;
    const delay = backoffDelayMs(call.failures, {
      baseMs: config.retryBaseMs,
      capMs: config.retryCapMs,
    });
    this.#d.logger.debug(`${error.message}; retry ${call.failures} in ${delay} ms`);
    try {
      await sleep(delay, signal);
    } catch {
      throw this.#cancelled(spec, call, false);
    }
  }

  /** A 429: the endpoint is penalised, or, asked for a wait beyond --max-wait-s, the run stops. */
  #rateLimited(key: string, template: string, header: string | null, attempts: number): void {
    const { config, budget, metrics } = this.#d;
    metrics.endpoint(key).rateLimited += 1;
    metrics.error(key, "rate_limited");
    const retryAfter = parseRetryAfter(header);
    const wait = retryAfter ?? config.penaltyS;
    if (wait > config.maxWaitS) {
      const source = retryAfter === undefined ? "--penalty-s" : "Retry-After";
      const error = waitTooLong(key, wait, source, config.maxWaitS);
      // Nothing more may go out: every other request of the run stops with this reason.
      this.#d.halt(error);
      throw error.with({ attempts });
    }
    budget.penalise(template, retryAfter);
  }

  /** The run's patience (--max-refused-s): a 429 or 5xx extends a refusal streak, a 2xx ends it. */
  #notePatience(key: string, outcome: Outcome): void {
    if ("failure" in outcome) return;
    if (outcome.status >= 200 && outcome.status < 300) this.#d.patience.succeeded(key);
    else if (outcome.status === 429 || outcome.status >= 500)
      this.#d.patience.refused(
        key,
        outcome.status,
        "retryAfter" in outcome ? outcome.retryAfter : null,
      );
  }

  #error(
    endpoint: string,
    kind: PlatformErrorKind,
    classification: Classification,
    rest: { detail: string; status?: number; title?: string; cause?: Error },
  ): PlatformError {
    return new PlatformError({ kind, classification, endpoint, ...rest });
  }

  #cancelled(spec: RequestSpec, call: CallState, sent: boolean): PlatformError {
    return cancelledError(this.#d.signal.reason, spec.method, call, sent);
  }

  toJSON(): string {
    return "[HttpClient]";
  }

  [inspect.custom](): string {
    return "[HttpClient]";
  }
}
