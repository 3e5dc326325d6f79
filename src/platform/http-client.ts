import { inspect } from "node:util";
import pLimit, { type LimitFunction } from "p-limit";
import { backoffDelayMs, sleep } from "../backoff.ts";
import { MAX_RESPONSE_BYTES, tooLargeDetail } from "./bounded-body.ts";
import { buildUrl, exchange, type Outcome, readJson } from "./http-exchange.ts";
import type { HttpClientDeps, Reply, RequestSpec } from "./http-request-types.ts";
import { LinkedSignal } from "./linked-signal.ts";
import { waitTooLong } from "./max-wait.ts";
import {
  type Classification,
  classify,
  type HttpMethod,
  PlatformError,
  type PlatformErrorKind,
} from "./platform-error.ts";
import { parseRetryAfter } from "./problem-details.ts";
import { statusError } from "./status-error.ts";

const PENALISED = Symbol("penalised");
const CANCELLED = Symbol("cancelled");
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
    const m = metrics.endpoint(key);
    const url = buildUrl(config.apiUrl, spec);
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    let attempts = 0;
    // Only failures spend the retry budget; a 429 or a 401 replay is not the request failing.
    let failures = 0;
    let replayed = false;
    let hadAmbiguous = false;
    for (;;) {
      if (signal.aborted) throw this.#cancelled(key, spec.method, false, attempts, hadAmbiguous);
      try {
        await budget.waitOpen(spec.template, signal);
      } catch {
        throw this.#cancelled(key, spec.method, false, attempts, hadAmbiguous);
      }
      // After the penalty wait: a token fetched before a five-minute pause could be stale.
      let token: string;
      try {
        token = await tokens.get(signal);
      } catch (err) {
        throw hadAmbiguous && err instanceof PlatformError ? stillAmbiguous(err, attempts) : err;
      }
      // The slot is taken after the penalty wait, so a penalised endpoint never holds slots
      // that other endpoints could use (a penalty starting meanwhile releases the bucket's
      // waiters). The bucket wait is inside the slot, so a grant is followed by the send at
      // once; granting first and then queueing for a slot would let sends bunch up.
      const outcome = await this.#limit(async () => {
        if (signal.aborted) return CANCELLED;
        try {
          if (!(await budget.take(spec.template, signal))) return PENALISED;
        } catch {
          return CANCELLED;
        }
        m.requests += 1;
        // The budget counts the real send, not the grant (see TokenBucket's trackSends).
        return exchange(url, spec.method, token, body, config.timeoutMs, signal, m.latency, () =>
          budget.sent(spec.template),
        );
      });
      if (outcome === PENALISED) continue;
      if (outcome === CANCELLED)
        throw this.#cancelled(key, spec.method, false, attempts, hadAmbiguous);
      attempts += 1;
      metrics.status(key, "failure" in outcome ? outcome.failure.kind : outcome.status);
      this.#notePatience(key, outcome);

      let error: PlatformError;
      if ("tooLarge" in outcome) {
        error = this.#error(key, "protocol", spec.method === "GET" ? "fatal" : "ambiguous", {
          status: outcome.status,
          detail: tooLargeDetail(outcome.tooLarge, MAX_RESPONSE_BYTES),
        });
      } else if ("failure" in outcome) {
        const f = outcome.failure;
        if (f.kind === "cancelled")
          throw this.#cancelled(key, spec.method, f.sent, attempts, hadAmbiguous);
        error = this.#error(key, f.kind, classify(f.kind, spec.method, f.sent), {
          detail:
            f.kind === "timeout"
              ? `no answer within ${config.timeoutMs} ms (--timeout-ms)`
              : `connection failed (${this.#d.redactor.scrub(f.summary)})${UNREACHABLE.test(f.summary) ? "; check --api-url" : ""}`,
          cause: new Error(this.#d.redactor.scrub(f.summary)),
        });
      } else if (outcome.status >= 200 && outcome.status < 300) {
        const parsed = readJson(outcome.text);
        if (parsed.ok) {
          return {
            status: outcome.status,
            body: parsed.value,
            attempts,
            afterAmbiguousAttempt: hadAmbiguous,
          };
        }
        // A write answered 2xx was committed, but we cannot read what it created.
        error = this.#error(key, "protocol", spec.method === "GET" ? "fatal" : "ambiguous", {
          status: outcome.status,
          detail: "the response body is not valid JSON",
        });
      } else if (outcome.status === 401 && !replayed) {
        // Expired early, revoked or rotated: one fresh token, one replay (a 401 was not processed).
        replayed = true;
        m.authReplays += 1;
        metrics.error(key, "unauthorized");
        tokens.invalidate(token);
        continue;
      } else if (outcome.status === 429) {
        this.#rateLimited(key, spec.template, outcome.retryAfter, attempts);
        continue;
      } else {
        error = statusError(this.#d.redactor, key, spec, outcome, replayed);
      }

      // Only two 401s in a row are fatal: a later revocation (after a retry) earns a fresh replay.
      if (error.kind !== "unauthorized") replayed = false;
      metrics.error(key, error.kind);
      if (error.classification === "ambiguous") {
        m.ambiguous += 1;
        hadAmbiguous = true;
      }
      const again =
        error.classification === "retryable" ||
        (error.classification === "ambiguous" && spec.retryAmbiguous === true);
      failures += 1;
      if (!again || failures >= config.maxAttempts) {
        throw hadAmbiguous ? stillAmbiguous(error, attempts) : error.with({ attempts });
      }
      m.retries += 1;
      const delay = backoffDelayMs(failures, {
        baseMs: config.retryBaseMs,
        capMs: config.retryCapMs,
      });
      this.#d.logger.debug(`${error.message}; retry ${failures} in ${delay} ms`);
      try {
        await sleep(delay, signal);
      } catch {
        throw this.#cancelled(key, spec.method, false, attempts, hadAmbiguous);
      }
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

  #cancelled(
    endpoint: string,
    method: HttpMethod,
    sent: boolean,
    attempts: number,
    afterAmbiguousAttempt = false,
  ) {
    // A halted client says why it stopped (the platform's refusal), not merely that it did.
    const why = this.#d.signal.reason;
    if (why instanceof PlatformError) {
      return why.with({
        kind: "cancelled",
        classification: afterAmbiguousAttempt ? "ambiguous" : classify("cancelled", method, sent),
        afterAmbiguousAttempt,
        attempts,
      });
    }
    return new PlatformError({
      kind: "cancelled",
      // Stopping a delete between an ambiguous attempt and its repeat leaves it just as unknown.
      classification: afterAmbiguousAttempt ? "ambiguous" : classify("cancelled", method, sent),
      afterAmbiguousAttempt,
      endpoint,
      detail: sent ? "cancelled while the request was in flight" : "cancelled before sending",
      attempts,
    });
  }

  toJSON(): string {
    return "[HttpClient]";
  }

  [inspect.custom](): string {
    return "[HttpClient]";
  }
}

/**
 * After an ambiguous attempt, whatever ends the call leaves the outcome unknown. Only the caller
 * can read a later 404/409 as "done" (deletes do), so the flag travels with the error.
 */
function stillAmbiguous(error: PlatformError, attempts: number): PlatformError {
  return error.with({ attempts, afterAmbiguousAttempt: true, classification: "ambiguous" });
}
