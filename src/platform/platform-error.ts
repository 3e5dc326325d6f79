/** What went wrong, as callers branch on it. */
export type PlatformErrorKind =
  | "bad_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "rate_limited"
  | "server"
  | "network"
  | "timeout"
  | "protocol"
  | "cancelled";

/**
 * What the caller may do about it. `retryable`: safe to send again. `fatal`: sending again cannot
 * help. `ambiguous`: a write whose outcome is unknown (it may or may not have been committed), so
 * the caller must look before acting again.
 */
export type Classification = "retryable" | "fatal" | "ambiguous";

export type HttpMethod = "GET" | "POST" | "DELETE";

export interface PlatformErrorInit {
  readonly kind: PlatformErrorKind;
  readonly classification: Classification;
  /** Method + path template, e.g. `POST /v2/identity/controls`. */
  readonly endpoint: string;
  readonly status?: number;
  readonly title?: string;
  readonly detail: string;
  readonly retryAfterS?: number;
  readonly attempts?: number;
  /** True when an earlier attempt of the same call ended ambiguously (deletes use it). */
  readonly afterAmbiguousAttempt?: boolean;
  /** A sanitised description of the low-level cause (never the raw undici error). */
  readonly cause?: Error;
}

/**
 * The one error type of the platform client. Its message names the endpoint and what the
 * platform (or the network) said; it never carries a secret or a token, because every text that
 * reaches it has been scrubbed and the raw low-level error is replaced by a plain summary.
 *
 * @example
 *   try { await client.getIdentity(id); }
 *   catch (err) { if (err instanceof PlatformError && err.kind === "not_found") skip(id); else throw err; }
 */
export class PlatformError extends Error {
  override readonly name = "PlatformError";
  readonly kind: PlatformErrorKind;
  readonly classification: Classification;
  readonly endpoint: string;
  readonly status: number | undefined;
  readonly title: string | undefined;
  readonly detail: string;
  readonly retryAfterS: number | undefined;
  readonly attempts: number;
  readonly afterAmbiguousAttempt: boolean;

  constructor(init: PlatformErrorInit) {
    const head = init.status ? `${init.status}${init.title ? ` ${init.title}` : ""}: ` : "";
    super(`${init.endpoint}: ${head}${init.detail}`, init.cause ? { cause: init.cause } : {});
    this.kind = init.kind;
    this.classification = init.classification;
    this.endpoint = init.endpoint;
    this.status = init.status;
    this.title = init.title;
    this.detail = init.detail;
    this.retryAfterS = init.retryAfterS;
    this.attempts = init.attempts ?? 1;
    this.afterAmbiguousAttempt = init.afterAmbiguousAttempt ?? false;
  }

  get retryable(): boolean {
    return this.classification === "retryable";
  }

  get ambiguous(): boolean {
    return this.classification === "ambiguous";
  }

  /** A copy with other attempt bookkeeping; errors are immutable once thrown. */
  with(patch: Partial<PlatformErrorInit>): PlatformError {
    return new PlatformError({
      ...this.#fields(),
      afterAmbiguousAttempt: this.afterAmbiguousAttempt,
      cause: this.cause as Error | undefined,
      ...patch,
    });
  }

  toJSON(): Record<string, unknown> {
    return { name: this.name, message: this.message, ...this.#fields() };
  }

  /** The fields an error is rebuilt from and serialised with. */
  #fields() {
    return {
      kind: this.kind,
      classification: this.classification,
      endpoint: this.endpoint,
      status: this.status,
      title: this.title,
      detail: this.detail,
      retryAfterS: this.retryAfterS,
      attempts: this.attempts,
    };
  }
}

/** Maps an HTTP error status to a kind; anything unexpected outside 4xx/5xx is a protocol error. */
export function kindForStatus(status: number): PlatformErrorKind {
  switch (status) {
    case 400:
    case 422:
      return "bad_request";
    case 401:
      return "unauthorized";
    case 403:
      return "forbidden";
    case 404:
      return "not_found";
    case 409:
      return "conflict";
    case 429:
      return "rate_limited";
  }
  if (status >= 500) return "server";
  if (status >= 400) return "bad_request";
  return "protocol";
}

const isWrite = (method: HttpMethod) => method !== "GET";

/**
 * The retry policy in one table. `sent` says whether the request may have reached the server:
 * a refused connection is safe to repeat even for a write, a dropped one after sending is not.
 */
export function classify(
  kind: PlatformErrorKind,
  method: HttpMethod,
  sent: boolean,
): Classification {
  switch (kind) {
    case "rate_limited":
      // A 429 was refused before processing; re-sending it is always safe.
      return "retryable";
    case "server":
    case "timeout":
    case "network":
      if (!isWrite(method) || !sent) return "retryable";
      return "ambiguous";
    case "cancelled":
      return isWrite(method) && sent ? "ambiguous" : "fatal";
    default:
      return "fatal";
  }
}

// undici codes that mean the connection was never established, so nothing was sent.
const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
  "CERT_HAS_EXPIRED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
]);

export interface FetchFailure {
  readonly kind: "network" | "timeout" | "cancelled";
  readonly sent: boolean;
  /** e.g. `ECONNRESET: other side closed`; safe to print (no headers, no bodies). */
  readonly summary: string;
}

/**
 * Reads a fetch rejection. `timedOut`/`cancelled` come from the signals the caller built, because
 * undici reports both as a plain AbortError/TimeoutError.
 */
export function describeFetchFailure(
  err: unknown,
  state: { timedOut: boolean; cancelled: boolean },
): FetchFailure {
  if (state.cancelled) return { kind: "cancelled", sent: true, summary: "cancelled by the caller" };
  if (state.timedOut)
    return { kind: "timeout", sent: true, summary: "no answer before the timeout" };
  const e = err as { name?: string; message?: string; code?: string; cause?: unknown };
  const cause = (e?.cause ?? {}) as { code?: string; message?: string; name?: string };
  const code = cause.code ?? e?.code;
  if (e?.name === "TimeoutError" || cause.name === "TimeoutError") {
    return { kind: "timeout", sent: true, summary: "no answer before the timeout" };
  }
  const message = String(cause.message ?? e?.message ?? "fetch failed").slice(0, 200);
  return {
    kind: "network",
    sent: !(code && NOT_SENT_CODES.has(code)),
    summary: code ? `${code}: ${message}` : message,
  };
}
