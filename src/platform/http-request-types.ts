/**
 * The shapes around one API call of `HttpClient`: the request a caller describes (`RequestSpec`),
 * the reply it gets back (`Reply`), and what the client is built from (`HttpClientDeps`: config,
 * tokens, rate budget, metrics, redaction, logging, the run's signal, halt and patience). Types
 * only; `http-client.ts` does the sending.
 */
import type { PlatformConfig } from "../config.ts";
import type { Logger } from "../log.ts";
import type { MetricsRecorder } from "./client-metrics.ts";
import type { HttpMethod, PlatformError } from "./platform-error.ts";
import type { RateBudget } from "./rate-budget.ts";
import type { Redactor } from "./redactor.ts";
import type { RefusalPatience } from "./refusal-patience.ts";
import type { TokenManager } from "./token-manager.ts";

export interface RequestSpec {
  readonly method: HttpMethod;
  /** Path template, the rate-limit key: `/v2/identity/identities/{id}`. */
  readonly template: string;
  /** Concrete path, already encoded. */
  readonly path: string;
  /** A list value is sent as a repeated parameter (`control_types=A&control_types=B`). */
  readonly query?: Record<string, string | readonly string[] | undefined>;
  readonly body?: unknown;
  /** Re-send after an ambiguous outcome (deletes: a repeat is harmless and answers 404). */
  readonly retryAmbiguous?: boolean;
  readonly signal?: AbortSignal;
}

export interface Reply {
  readonly status: number;
  readonly body: unknown;
  readonly attempts: number;
  readonly afterAmbiguousAttempt: boolean;
}

export interface HttpClientDeps {
  readonly config: PlatformConfig;
  readonly tokens: TokenManager;
  readonly budget: RateBudget;
  readonly metrics: MetricsRecorder;
  readonly redactor: Redactor;
  readonly logger: Logger;
  /** Aborted when the client is closed or the run is interrupted. */
  readonly signal: AbortSignal;
  /** Stops the whole client (aborts `signal` with this error): the run cannot go on. */
  readonly halt: (error: PlatformError) => void;
  /** The run's patience with an endpoint that keeps refusing (--max-refused-s). */
  readonly patience: RefusalPatience;
}
