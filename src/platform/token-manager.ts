import { inspect } from "node:util";
import { backoffDelayMs, sleep } from "../backoff.ts";
import type { Logger } from "../log.ts";
import type { Secret } from "../secret.ts";
import type { MetricsRecorder } from "./client-metrics.ts";
import { waitTooLong } from "./max-wait.ts";
import { PlatformError } from "./platform-error.ts";
import { oauthErrorCode, parseProblem, parseRetryAfter } from "./problem-details.ts";
import type { Redactor } from "./redactor.ts";
import type { RefusalPatience } from "./refusal-patience.ts";
import { TokenBucket } from "./token-bucket.ts";
import { basic, requestToken } from "./token-request.ts";

export interface TokenManagerOptions {
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: Secret;
  readonly scopes: readonly string[];
  /** Budget of the token endpoint (the platform allows 1 rps); burst is always 1. */
  readonly tokenRps: number;
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  readonly retryBaseMs: number;
  readonly retryCapMs: number;
  /** Wait after a 429 without Retry-After. */
  readonly penaltyS: number;
  /** A 429 asking for a longer wait stops the client instead (--max-wait-s). */
  readonly maxWaitS: number;
  /** Stops the whole client with this error. */
  readonly halt: (error: PlatformError) => void;
  /** The run's patience with a token endpoint that keeps refusing (--max-refused-s). */
  readonly patience: RefusalPatience;
  readonly logger: Logger;
  readonly metrics: MetricsRecorder;
  readonly redactor: Redactor;
  /** The client's lifetime signal: a shared refresh is cancelled only when the client is. */
  readonly signal: AbortSignal;
}

interface CachedToken {
  readonly value: string;
  readonly refreshAt: number;
}

/** Assumed lifetime when the server omits `expires_in`; a 401 still triggers a refresh. */
const DEFAULT_TTL_S = 300;

/**
 * OAuth2 client-credentials tokens, fetched once and shared: the token is cached until shortly
 * before it expires (10% of its lifetime, at most 30 s, early), concurrent callers wait on one
 * refresh, and the token endpoint is never asked more often than `tokenRps`.
 *
 * @example
 *   const tokens = new TokenManager({ ...options, scopes: READ_SCOPES });
 *   const bearer = await tokens.get(signal);
 *   // after a 401 carrying `bearer`:
 *   tokens.invalidate(bearer);
 */
export class TokenManager {
  readonly #o: TokenManagerOptions;
  readonly #bucket: TokenBucket;
  readonly #endpoint: string;
  #token: CachedToken | undefined;
  #refresh: Promise<string> | undefined;
  /** A refusal that asking again cannot fix (bad credentials, scope); every later call gets it. */
  #fatal: PlatformError | undefined;

  constructor(options: TokenManagerOptions) {
    this.#o = options;
    this.#bucket = new TokenBucket({ rate: options.tokenRps, burst: 1 });
    this.#endpoint = `POST ${new URL(options.tokenUrl).pathname}`;
  }

  /** The current token, refreshing it first (once, for all callers) if it is missing or stale. */
  async get(signal?: AbortSignal): Promise<string> {
    const t = this.#token;
    if (t && Date.now() < t.refreshAt) return t.value;
    if (this.#fatal) throw this.#fatal;
    if (!this.#refresh) {
      this.#o.patience.begin(this.#endpoint);
      this.#refresh = this.#fetch()
        .catch((err: unknown) => {
          // Thousands of queued requests must not each ask the token endpoint again.
          if (
            err instanceof PlatformError &&
            err.classification === "fatal" &&
            err.kind !== "cancelled"
          )
            this.#fatal = err;
          throw err;
        })
        .finally(() => {
          this.#refresh = undefined;
          this.#o.patience.end(this.#endpoint);
        });
    }
    return signal ? raceAbort(this.#refresh, signal, this.#endpoint) : this.#refresh;
  }

  /** Drops `token` if it is still the cached one (a later refresh may already have replaced it). */
  invalidate(token: string): void {
    if (this.#token?.value === token) this.#token = undefined;
  }

  async #fetch(): Promise<string> {
    const o = this.#o;
    const signal = o.signal;
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      await this.#bucket.take(signal).catch(() => cancelled(this.#endpoint, signal));
      o.metrics.token.requests += 1;
      const answer = await requestToken(o, signal, this.#endpoint);
      if ("failure" in answer) {
        const f = answer.failure;
        o.metrics.token.errors += 1;
        if (f.kind === "cancelled") cancelled(this.#endpoint);
        const error = new PlatformError({
          kind: f.kind,
          classification: "retryable",
          endpoint: this.#endpoint,
          detail: `token request failed (${o.redactor.scrub(f.summary)}); check --token-url`,
          attempts: attempt,
        });
        if (attempt >= o.maxAttempts) throw error;
        await this.#backoff(attempt, error);
        continue;
      }
      const { status, text, retryAfter } = answer;
      if (status === 429 || status >= 500) o.patience.refused(this.#endpoint, status, retryAfter);
      else o.patience.succeeded(this.#endpoint);
      if (status >= 200 && status < 300) {
        const token = this.#accept(text, started);
        this.#token = token;
        o.metrics.token.issued += 1;
        return token.value;
      }
      o.metrics.token.errors += 1;
      if (status === 429) {
        const given = parseRetryAfter(retryAfter);
        const seconds = given ?? o.penaltyS;
        if (seconds > o.maxWaitS) {
          const source = given === undefined ? "--penalty-s" : "Retry-After";
          const error = waitTooLong(this.#endpoint, seconds, source, o.maxWaitS);
          o.halt(error);
          throw error.with({ attempts: attempt });
        }
        o.logger.warn(
          `Rate limited (429) on the token endpoint: asking again at ${new Date(Date.now() + seconds * 1000).toISOString()}.`,
        );
        await sleep(seconds * 1000, signal).catch(() => cancelled(this.#endpoint, signal));
        continue;
      }
      const error = this.#refusal(status, text, attempt);
      if (error.classification !== "retryable" || attempt >= o.maxAttempts) throw error;
      await this.#backoff(attempt, error);
    }
  }

  async #backoff(attempt: number, error: PlatformError): Promise<void> {
    const o = this.#o;
    const delay = backoffDelayMs(attempt, { baseMs: o.retryBaseMs, capMs: o.retryCapMs });
    o.logger.debug(`${error.message}; retrying in ${delay} ms`);
    await sleep(delay, o.signal).catch(() => cancelled(this.#endpoint, o.signal));
  }

  #accept(text: string, started: number): CachedToken {
    const fail = (detail: string) =>
      new PlatformError({
        kind: "protocol",
        classification: "fatal",
        endpoint: this.#endpoint,
        detail,
      });
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw fail("the token response is not JSON");
    }
    const value = body?.access_token;
    if (typeof value !== "string" || value === "") throw fail("access_token is missing");
    // Registered before anything else can print it.
    this.#o.redactor.add(value);
    const type = body.token_type;
    if (typeof type === "string" && type.toLowerCase() !== "bearer")
      throw fail(`token_type must be Bearer, got ${JSON.stringify(type.slice(0, 40))}`);
    const granted = typeof body.scope === "string" ? body.scope.split(/\s+/) : undefined;
    const missing = granted ? this.#o.scopes.filter((s) => !granted.includes(s)) : [];
    if (missing.length > 0) {
      throw new PlatformError({
        kind: "forbidden",
        classification: "fatal",
        endpoint: this.#endpoint,
        detail: `the token was granted without the scope(s) ${missing.join(", ")}; this client id is not allowed them`,
      });
    }
    const raw = Number(body.expires_in);
    const ttlS = Number.isFinite(raw) && raw > 0 ? raw : DEFAULT_TTL_S;
    const margin = Math.min(30_000, ttlS * 100);
    this.#o.logger.debug(`Obtained an access token (expires in ${ttlS} s).`);
    return { value, refreshAt: started + ttlS * 1000 - margin };
  }

  #refusal(status: number, text: string, attempt: number): PlatformError {
    const o = this.#o;
    const problem = parseProblem(o.redactor.scrub(text));
    const code = oauthErrorCode(text);
    const said = `${status}${code ? ` ${code}` : ""}: ${problem.detail}`;
    const base = { endpoint: this.#endpoint, status, title: problem.title, attempts: attempt };
    if (status >= 500) {
      return new PlatformError({
        ...base,
        kind: "server",
        classification: "retryable",
        detail: `the token endpoint failed (${said})`,
      });
    }
    if (status === 401 || code === "invalid_client" || code === "unauthorized_client") {
      return new PlatformError({
        ...base,
        kind: "unauthorized",
        classification: "fatal",
        detail: `the token endpoint refused the client credentials (${said}). Check --client-id / env OAUTH_CLIENT_ID and the secret (env OAUTH_CLIENT_SECRET or --client-secret-file), and that --token-url belongs to the same platform as --api-url.`,
      });
    }
    if (code === "invalid_scope") {
      return new PlatformError({
        ...base,
        kind: "forbidden",
        classification: "fatal",
        detail: `the token endpoint refused the scope(s) ${o.scopes.join(" ")} (${said}). This client id is not allowed them; read-only credentials can run only the read commands.`,
      });
    }
    return new PlatformError({
      ...base,
      kind: status === 403 ? "forbidden" : "bad_request",
      classification: "fatal",
      detail: `the token endpoint refused the request (${said})${status === 404 || status === 405 ? "; check --token-url: it must be the OAuth2 token endpoint's URL" : ""}`,
    });
  }

  toJSON(): string {
    return "[TokenManager]";
  }

  [inspect.custom](): string {
    return "[TokenManager]";
  }
}

/**
 * The HTTP Basic credentials of a client, as sent and as a server might spell them back (the
 * base64 of `id:secret`, form-encoded or not): secrets as much as the secret itself.
 *
 * @example
 *   basicCredentials("cm", "s3cret") // ["Y206czNjcmV0"]
 */
export function basicCredentials(id: string, secret: string): string[] {
  return [...new Set([basic(id, secret), Buffer.from(`${id}:${secret}`).toString("base64")])];
}

function cancelledError(endpoint: string, why?: unknown): PlatformError {
  // A halted client says why it stopped (the platform's refusal), not merely that it did.
  if (why instanceof PlatformError) return why.with({ kind: "cancelled" });
  return new PlatformError({
    kind: "cancelled",
    classification: "fatal",
    endpoint,
    detail: "cancelled before a token was obtained",
  });
}

function cancelled(endpoint: string, signal?: AbortSignal): never {
  throw cancelledError(endpoint, signal?.reason);
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal, endpoint: string): Promise<T> {
  if (signal.aborted) return Promise.reject(cancelledError(endpoint, signal.reason));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelledError(endpoint, signal.reason));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}
