import { inspect } from "node:util";
import type { PlatformConfig } from "../config.ts";
import { MAX_PAGE_SIZE } from "../contract/index.ts";
import { type Logger, silentLogger } from "../log.ts";
import { ClientLifecycle, type ClientPhase } from "./client-lifecycle.ts";
import { MetricsRecorder } from "./client-metrics.ts";
import { cursorPages } from "./cursor-pages.ts";
import { HttpClient } from "./http-client.ts";
import type {
  CreateControlInput,
  ListIdentitiesOptions,
  PlatformClient,
  PlatformClientOptions,
} from "./platform-client-types.ts";
import { PlatformError } from "./platform-error.ts";
import { RateBudget, type WriterHandover } from "./rate-budget.ts";
import { Redactor } from "./redactor.ts";
import { RefusalPatience } from "./refusal-patience.ts";
import { RunawayGuard } from "./runaway-guard.ts";
import { basicCredentials, TokenManager } from "./token-manager.ts";
import {
  ACCEPTED_REASON_CODES,
  CREATABLE_CONTROL_TYPES,
  type CreatedControl,
  type Identity,
  type IdentityControl,
  PATHS,
  SCOPE_WRITE_CONTROL,
} from "./types.ts";
import {
  parseControl,
  parseControlsPage,
  parseIdentitiesPage,
  parseIdentity,
} from "./wire-parsers.ts";

export type {
  CreateControlInput,
  ListIdentitiesOptions,
  PlatformClient,
  PlatformClientOptions,
} from "./platform-client-types.ts";

const PAGE_LIMIT = MAX_PAGE_SIZE;

const refuse = (endpoint: string, kind: "bad_request" | "forbidden", detail: string) =>
  new PlatformError({ kind, classification: "fatal", endpoint, detail });

/**
 * The platform client: typed identity and control endpoints over a shared token, a per-endpoint
 * rate budget, bounded concurrency and safe retries.
 *
 * @example
 *   const client = createPlatformClient(loadPlatformConfig(argv), { scopes: READ_SCOPES, logger });
 *   for await (const page of client.listIdentities()) store(page);
 *   await client.close();
 */
export function createPlatformClient(
  config: PlatformConfig,
  options: PlatformClientOptions,
): PlatformClient {
  const api = new PlatformApi(config, options);
  const client: PlatformClient = {
    listIdentities: (opts) => api.listIdentities(opts),
    getIdentity: (id, opts) => api.getIdentity(id, opts),
    listIdentityControls: (id, opts) => api.listIdentityControls(id, opts),
    createIdentityControl: (input) => api.createIdentityControl(input),
    deleteIdentityControl: (id, reason, opts) => api.deleteIdentityControl(id, reason, opts),
    metrics: () => api.metrics(),
    setRate: (template, rps) => api.setRate(template, rps),
    handover: api.handover,
    close: async () => api.close(),
  };
  Object.defineProperty(client, inspect.custom, { value: () => "[PlatformClient]" });
  Object.defineProperty(client, "toJSON", { value: () => "[PlatformClient]" });
  return Object.freeze(client);
}

/**
 * The client's parts wired once, and its endpoints. Its phase (open, halted, closed) lives in
 * `ClientLifecycle`; `createPlatformClient` hands out a frozen object of its methods.
 */
export class PlatformApi {
  readonly #life: ClientLifecycle;
  readonly #logger: Logger;
  readonly #metrics = new MetricsRecorder();
  readonly #budget: RateBudget;
  readonly #http: HttpClient;
  readonly #canWrite: boolean;

  constructor(config: PlatformConfig, options: PlatformClientOptions) {
    const logger = options.logger ?? silentLogger;
    const life = new ClientLifecycle(options.signal);
    const { signal } = life;
    const halt = (error: PlatformError) => life.halt(error);
    const redactor = new Redactor(logger);
    redactor.add(config.clientSecret.reveal());
    // A token endpoint may echo the Authorization header in an error body.
    for (const credential of basicCredentials(config.clientId, config.clientSecret.reveal()))
      redactor.add(credential);
    const metrics = this.#metrics;
    const budget = new RateBudget({ rate: config.rate, penaltyS: config.penaltyS, logger });
    const patience = new RefusalPatience({ limitS: config.maxRefusedS, halt, signal });
    // The token manager's settings are the platform config's own (token URL, client, timeouts).
    const tokens = new TokenManager({
      ...{ ...config, scopes: options.scopes, halt, patience, logger, metrics, redactor, signal },
    });
    this.#http = new HttpClient({
      ...{ config, tokens, budget, metrics, redactor, logger, signal, halt, patience },
    });
    this.#life = life;
    this.#logger = logger;
    this.#budget = budget;
    this.#canWrite = options.scopes.includes(SCOPE_WRITE_CONTROL);
  }

  get phase(): ClientPhase {
    return this.#life.phase;
  }

  /** Stops every request of the client with the platform's refusal (as its parts do). */
  halt(error: PlatformError): void {
    this.#life.halt(error);
  }

  close(): void {
    this.#life.close();
  }

  metrics() {
    return this.#metrics.snapshot(this.#budget.snapshot());
  }

  setRate(template: string, rps: number): void {
    this.#budget.setRate(template, rps);
  }

  /** The rate budget's side of a hand-over between writer processes. */
  get handover(): WriterHandover {
    return this.#budget;
  }

  async *listIdentities(opts: ListIdentitiesOptions = {}): AsyncGenerator<Identity[]> {
    const endpoint = `GET ${PATHS.identities}`;
    const limit = opts.limit ?? PAGE_LIMIT;
    // Only an order asked for is relied on; a listing in the platform's default order is
    // remembered by id.
    const guard = new RunawayGuard(endpoint, limit, opts.expectedTotal, opts.order);
    const filters = {
      control_types: opts.controlTypes?.length ? opts.controlTypes : undefined,
      "created_at.gte": opts.createdAtGte,
      "created_at.lt": opts.createdAtLt,
      "updated_at.gte": opts.updatedAtGte,
    };
    // One page, read and parsed: the answer's JSON is garbage once this returns, never held
    // while the page waits at the listing's `yield`.
    const readPage = async (cursor: string) => {
      const reply = await this.#http.send({
        method: "GET",
        template: PATHS.identities,
        path: PATHS.identities,
        query: {
          ...filters,
          limit: String(limit),
          order: opts.order,
          page_cursor: cursor || undefined,
        },
        signal: opts.signal,
      });
      return parseIdentitiesPage(reply.body, endpoint);
    };
    yield* cursorPages(readPage, guard, this.#watch(endpoint, "identity"));
  }

  async listIdentityControls(
    identityId: string,
    opts: { includeDeleted?: boolean; signal?: AbortSignal } = {},
  ): Promise<IdentityControl[]> {
    const endpoint = `GET ${PATHS.controls}`;
    const readPage = async (cursor: string) => {
      const reply = await this.#http.send({
        method: "GET",
        template: PATHS.controls,
        path: PATHS.controls,
        query: {
          identity_id: identityId,
          include_deleted: opts.includeDeleted ? "true" : undefined,
          limit: String(PAGE_LIMIT),
          page_cursor: cursor || undefined,
        },
        signal: opts.signal,
      });
      return parseControlsPage(reply.body, endpoint);
    };
    const guard = new RunawayGuard(endpoint, PAGE_LIMIT, undefined);
    const out: IdentityControl[] = [];
    for await (const items of cursorPages(readPage, guard, this.#watch(endpoint, "control"))) {
      for (const c of items) out.push(c);
    }
    return out;
  }

  async getIdentity(id: string, opts: { signal?: AbortSignal } = {}): Promise<Identity> {
    const reply = await this.#http.send({
      method: "GET",
      template: PATHS.identity,
      path: `${PATHS.identities}/${encodeURIComponent(id)}`,
      signal: opts.signal,
    });
    return parseIdentity(reply.body, `GET ${PATHS.identity}`);
  }

  async createIdentityControl(input: CreateControlInput): Promise<CreatedControl> {
    const endpoint = `POST ${PATHS.controls}`;
    this.#refuseLocally(endpoint, input);
    const reply = await this.#http.send({
      method: "POST",
      template: PATHS.controls,
      path: PATHS.controls,
      body: {
        identity_id: input.identityId,
        type: input.type,
        reason_code: input.reasonCode,
        ...(input.reason === undefined ? {} : { reason: input.reason }),
      },
      signal: input.signal,
    });
    try {
      const named = (reply.body as { identity_id?: unknown } | null)?.identity_id;
      return {
        ...parseControl(reply.body, endpoint),
        httpStatus: reply.status,
        identityId: typeof named === "string" ? named : null,
      };
    } catch (err) {
      // 2xx means it was committed; an unreadable record leaves the caller unsure what exists.
      throw err instanceof PlatformError ? err.with({ classification: "ambiguous" }) : err;
    }
  }

  async deleteIdentityControl(
    controlId: string,
    reason?: string,
    opts: { signal?: AbortSignal } = {},
  ): Promise<{ alreadyDeleted: boolean }> {
    if (!this.#canWrite) throw this.#readOnly(`DELETE ${PATHS.controls}`);
    try {
      await this.#http.send({
        method: "DELETE",
        template: PATHS.controls,
        path: PATHS.controls,
        query: { control_id: controlId, reason },
        retryAmbiguous: true,
        signal: opts.signal,
      });
      return { alreadyDeleted: false };
    } catch (err) {
      // The first attempt may have deleted it; "not found" (or "already deleted") now means done.
      if (
        err instanceof PlatformError &&
        err.afterAmbiguousAttempt &&
        (err.kind === "not_found" || err.kind === "conflict")
      ) {
        return { alreadyDeleted: true };
      }
      throw err;
    }
  }

  /** A create the platform would refuse, or this client may not send, is refused before sending. */
  #refuseLocally(endpoint: string, input: CreateControlInput): void {
    if (!(CREATABLE_CONTROL_TYPES as readonly string[]).includes(input.type)) {
      throw refuse(
        endpoint,
        "bad_request",
        `refused locally: clients may create only ${CREATABLE_CONTROL_TYPES.join(", ")} controls, not ${JSON.stringify(input.type)}${input.type === "FROZEN" ? " (FROZEN is set by the platform alone)" : ""}`,
      );
    }
    if (!(ACCEPTED_REASON_CODES as readonly string[]).includes(input.reasonCode)) {
      throw refuse(
        endpoint,
        "bad_request",
        `refused locally: reason_code must be one of ${ACCEPTED_REASON_CODES.join(", ")}, got ${JSON.stringify(input.reasonCode)}`,
      );
    }
    if (!this.#canWrite) throw this.#readOnly(endpoint);
  }

  #readOnly(endpoint: string): PlatformError {
    return refuse(
      endpoint,
      "forbidden",
      `refused locally: this client was created without the ${SCOPE_WRITE_CONTROL} scope (a read-only command)`,
    );
  }

  #watch(endpoint: string, what: string) {
    return { endpoint, what, metrics: this.#metrics, logger: this.#logger };
  }
}
