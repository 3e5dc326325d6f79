import { inspect } from "node:util";
import type { PlatformConfig } from "../config.ts";
import { MAX_PAGE_SIZE } from "../contract/index.ts";
import { silentLogger } from "../log.ts";
import { escapeInvisible } from "../visible-text.ts";
import { MetricsRecorder } from "./client-metrics.ts";
import { HttpClient } from "./http-client.ts";
import type {
  CreateControlInput,
  ListIdentitiesOptions,
  PlatformClient,
  PlatformClientOptions,
} from "./platform-client-types.ts";
import { PlatformError } from "./platform-error.ts";
import { RateBudget } from "./rate-budget.ts";
import { Redactor } from "./redactor.ts";
import { RefusalPatience } from "./refusal-patience.ts";
import { RunawayGuard } from "./runaway-guard.ts";
import { basicCredentials, TokenManager } from "./token-manager.ts";
import {
  ACCEPTED_REASON_CODES,
  CREATABLE_CONTROL_TYPES,
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
  const logger = options.logger ?? silentLogger;
  const closing = new AbortController();
  const signal = options.signal
    ? AbortSignal.any([closing.signal, options.signal])
    : closing.signal;
  const halt = (error: PlatformError) => {
    if (!closing.signal.aborted) closing.abort(error);
  };
  const redactor = new Redactor(logger);
  redactor.add(config.clientSecret.reveal());
  // A token endpoint may echo the Authorization header in an error body.
  for (const credential of basicCredentials(config.clientId, config.clientSecret.reveal()))
    redactor.add(credential);
  const metrics = new MetricsRecorder();
  const budget = new RateBudget({ rate: config.rate, penaltyS: config.penaltyS, logger });
  const patience = new RefusalPatience({ limitS: config.maxRefusedS, halt, signal });
  // The token manager's settings are the platform config's own (token URL, client, timeouts).
  const tokens = new TokenManager({
    ...{ ...config, scopes: options.scopes, halt, patience, logger, metrics, redactor, signal },
  });
  const http = new HttpClient({
    ...{ config, tokens, budget, metrics, redactor, logger, signal, halt, patience },
  });
  const canWrite = options.scopes.includes(SCOPE_WRITE_CONTROL);

  const refuse = (endpoint: string, kind: "bad_request" | "forbidden", detail: string) =>
    new PlatformError({ kind, classification: "fatal", endpoint, detail });

  async function* listIdentities(opts: ListIdentitiesOptions = {}) {
    const endpoint = `GET ${PATHS.identities}`;
    const limit = opts.limit ?? PAGE_LIMIT;
    // Only an order asked for is relied on; a listing in the platform's default order is
    // remembered by id.
    const guard = new RunawayGuard(endpoint, limit, opts.expectedTotal, opts.order);
    const seenCursors = new Set<string>();
    const filters = {
      control_types: opts.controlTypes?.length ? opts.controlTypes : undefined,
      "created_at.gte": opts.createdAtGte,
      "created_at.lt": opts.createdAtLt,
    };
    let cursor = "";
    // One page, read and parsed: the answer's JSON is garbage once this returns, never held
    // while the page waits at the `yield` below (it would outlive young collections for nothing).
    const readPage = async () => {
      const reply = await http.send({
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
    do {
      guard.beforePage();
      const page = await readPage();
      const items = dropRepeats(page.items, endpoint, "identity");
      cursor = loopGuard(seenCursors, page.nextPageCursor, endpoint);
      guard.afterPage(items, cursor !== "");
      yield items;
    } while (cursor !== "");
  }

  /**
   * One copy of each item of a page. A platform that serves an item twice in one page would make
   * the snapshot insert fail on its own conflict; the repeat is counted and logged instead.
   */
  function dropRepeats<T extends { id: string }>(items: T[], endpoint: string, what: string): T[] {
    const ids = new Set<string>();
    const kept: T[] = [];
    let first: string | undefined;
    for (const item of items) {
      if (ids.has(item.id)) first ??= item.id;
      else {
        ids.add(item.id);
        kept.push(item);
      }
    }
    const dropped = items.length - kept.length;
    if (dropped > 0) {
      metrics.endpoint(endpoint).anomalies += dropped;
      logger.warn(
        `Platform anomaly: ${endpoint} served ${dropped} ${what} record(s) twice within one page (first: "${escapeInvisible(first ?? "")}"); kept one copy of each.`,
      );
    }
    return kept;
  }

  async function listIdentityControls(
    identityId: string,
    opts: { includeDeleted?: boolean; signal?: AbortSignal } = {},
  ): Promise<IdentityControl[]> {
    const endpoint = `GET ${PATHS.controls}`;
    const out: IdentityControl[] = [];
    const seen = new Set<string>();
    const guard = new RunawayGuard(endpoint, PAGE_LIMIT, undefined);
    let cursor = "";
    do {
      guard.beforePage();
      const reply = await http.send({
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
      const page = parseControlsPage(reply.body, endpoint);
      const items = dropRepeats(page.items, endpoint, "control");
      cursor = loopGuard(seen, page.nextPageCursor, endpoint);
      guard.afterPage(items, cursor !== "");
      for (const c of items) out.push(c);
    } while (cursor !== "");
    return out;
  }

  async function getIdentity(id: string, opts: { signal?: AbortSignal } = {}): Promise<Identity> {
    const reply = await http.send({
      method: "GET",
      template: PATHS.identity,
      path: `${PATHS.identities}/${encodeURIComponent(id)}`,
      signal: opts.signal,
    });
    return parseIdentity(reply.body, `GET ${PATHS.identity}`);
  }

  async function createIdentityControl(input: CreateControlInput): Promise<IdentityControl> {
    const endpoint = `POST ${PATHS.controls}`;
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
    if (!canWrite) {
      throw refuse(
        endpoint,
        "forbidden",
        `refused locally: this client was created without the ${SCOPE_WRITE_CONTROL} scope (a read-only command)`,
      );
    }
    const reply = await http.send({
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
      return parseControl(reply.body, endpoint);
    } catch (err) {
      // 2xx means it was committed; an unreadable record leaves the caller unsure what exists.
      throw err instanceof PlatformError ? err.with({ classification: "ambiguous" }) : err;
    }
  }

  async function deleteIdentityControl(
    controlId: string,
    reason?: string,
    opts: { signal?: AbortSignal } = {},
  ): Promise<{ alreadyDeleted: boolean }> {
    if (!canWrite) {
      throw refuse(
        `DELETE ${PATHS.controls}`,
        "forbidden",
        `refused locally: this client was created without the ${SCOPE_WRITE_CONTROL} scope (a read-only command)`,
      );
    }
    try {
      await http.send({
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

  const client: PlatformClient = {
    listIdentities,
    getIdentity,
    listIdentityControls,
    createIdentityControl,
    deleteIdentityControl,
    metrics: () => metrics.snapshot(budget.snapshot()),
    setRate: (template, rps) => budget.setRate(template, rps),
    close: async () => {
      closing.abort(new Error("platform client closed"));
    },
  };
  Object.defineProperty(client, inspect.custom, { value: () => "[PlatformClient]" });
  Object.defineProperty(client, "toJSON", { value: () => "[PlatformClient]" });
  return Object.freeze(client);
}

/** A cursor seen twice would loop forever; the platform promised opaque, advancing cursors. */
function loopGuard(seen: Set<string>, cursor: string, endpoint: string): string {
  if (cursor === "") return "";
  if (seen.has(cursor)) {
    throw new PlatformError({
      kind: "protocol",
      classification: "fatal",
      endpoint,
      detail: "next_page_cursor repeats an earlier cursor; stopping instead of looping forever",
    });
  }
  seen.add(cursor);
  return cursor;
}
