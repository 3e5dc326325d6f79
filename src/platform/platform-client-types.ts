/** The platform client's interface and its inputs (`platform-client.ts` builds it). */
import type { Logger } from "../log.ts";
import type { ClientMetrics } from "./client-metrics.ts";
import type { WriterHandover } from "./rate-budget.ts";
import type { CreatedControl, Identity, IdentityControl } from "./types.ts";

export interface PlatformClientOptions {
  /** Exactly the scopes to request: `READ_SCOPES` for read-only commands, `WRITE_SCOPES` for writers. */
  readonly scopes: readonly string[];
  readonly logger?: Logger;
  /** Cancels everything waiting or in flight (e.g. the command's SIGINT signal). */
  readonly signal?: AbortSignal;
}

export interface CreateControlInput {
  readonly identityId: string;
  readonly type: string;
  readonly reasonCode: string;
  readonly reason?: string;
  readonly signal?: AbortSignal;
}

/**
 * Filters of `GET /v2/identity/identities` the tool uses. Times are RFC 3339 strings, sent
 * verbatim (a bound the platform returned keeps its full precision).
 */
export interface ListIdentitiesOptions {
  readonly limit?: number;
  /** The platform's default is DESC. */
  readonly order?: "ASC" | "DESC";
  /** Only identities holding an active control of one of these types (`control_types`). */
  readonly controlTypes?: readonly string[];
  /** `created_at.gte` / `created_at.lt`: one window of a partitioned listing. */
  readonly createdAtGte?: string;
  readonly createdAtLt?: string;
  /** `updated_at.gte`: only identities the platform changed since (`--since-last`). */
  readonly updatedAtGte?: string;
  readonly signal?: AbortSignal;
  /** How many identities the caller expects (e.g. the source's row count), for the page cap. */
  readonly expectedTotal?: number;
}

export interface PlatformClient {
  /**
   * Identities matching the filters, page by page (`next_page_cursor` followed until empty;
   * each page's cursor is sent with the same filters, as the platform requires). Never sends
   * `set_by`; both of its spellings are read. Stops with a protocol error when a page brings no
   * identity not listed before, or when the pages read exceed twice what `expectedTotal`
   * identities need plus ten: a listing that never ends is refused.
   */
  listIdentities(opts?: ListIdentitiesOptions): AsyncGenerator<Identity[]>;
  /** One identity; unknown id → PlatformError kind `not_found`. */
  getIdentity(id: string, opts?: { signal?: AbortSignal }): Promise<Identity>;
  /** All of an identity's controls (every page, 1000 per page). */
  listIdentityControls(
    identityId: string,
    opts?: { includeDeleted?: boolean; signal?: AbortSignal },
  ): Promise<IdentityControl[]>;
  /**
   * Never retried blindly: an outcome that may have been committed throws a PlatformError whose
   * `classification` is `ambiguous`; look at the identity's controls before trying again. The
   * answer is returned as the platform gave it (its status and the identity it names too): the
   * caller checks it is the control it asked for.
   */
  createIdentityControl(input: CreateControlInput): Promise<CreatedControl>;
  /** `alreadyDeleted` when a repeat after an ambiguous attempt found the control gone. */
  deleteIdentityControl(
    controlId: string,
    reason?: string,
    opts?: { signal?: AbortSignal },
  ): Promise<{ alreadyDeleted: boolean }>;
  metrics(): ClientMetrics;
  /**
   * Sets the rate budget of one path template (requests/s) from now on, for every request to it
   * (`set-rate` on a running run sets the write path's, `PATHS.controls`).
   */
  setRate(template: string, rps: number): void;
  /** Between writer processes: the last second's sends handed on, or a hold (rate-budget.ts). */
  readonly handover: WriterHandover;
  /** Cancels whatever is waiting or in flight; later calls fail as cancelled. */
  close(): Promise<void>;
}
