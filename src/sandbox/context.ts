import type { Socket } from "node:net";
import type { ExtStore } from "./ext-store.ts";
import type { FaultInjector } from "./gateway/faults.ts";
import type { RateLimiter } from "./gateway/rate-limiter.ts";
import type { RequestStats } from "./gateway/request-stats.ts";
import type { SandboxStore } from "./identity/identity-store.ts";
import type { SetBySpelling } from "./identity/set-by.ts";
import type { OAuthIssuer } from "./oauth/oauth-issuer.ts";
import type { CursorCodec } from "./paging/cursor-codec.ts";
import type { Limits } from "./types.ts";

/** The state one sandbox instance shares between its routes, hooks and programmatic API. */
export interface SandboxContext {
  readonly store: SandboxStore;
  /** Quote executions, orders, balances and transfers, deposit addresses, orchestration rules. */
  readonly ext: ExtStore;
  readonly cursors: CursorCodec;
  readonly issuer: OAuthIssuer;
  readonly faults: FaultInjector;
  /** Mutable: `setLimits` edits it in place so the limiters see the change at once. */
  readonly limits: Limits;
  readonly apiLimiter: RateLimiter;
  readonly tokenLimiter: RateLimiter;
  readonly stats: RequestStats;
  readonly writes: { creates: number; deletes: number };
  /** Sockets held open by the hang fault; destroyed on close. */
  readonly hanging: Set<Socket>;
  /** Monotonic clock for identities seeded without created_at: never two equal, never backwards. */
  readonly nextCreatedAt: () => number;
  /** How this sandbox spells set_by in what it creates (API creates, seeds, admin defaults). */
  readonly setBy: SetBySpelling;
}

declare module "fastify" {
  /**
   * Per-route settings read by the shared hooks (Fastify's typed route config); routes without
   * `endpoint` (admin, unknown) skip limits, faults and auth.
   */
  interface FastifyContextConfig {
    /** The rate-limited endpoint path (route template), e.g. "/v2/identity/identities/:id". */
    endpoint?: string;
    /** The OAuth scope the bearer token must carry; absent on the token endpoint. */
    scope?: string;
  }
}

export const TOKEN_PATH = "/oauth2/token";
export const CONTROLS_PATH = "/v2/identity/controls";
export const IDENTITIES_PATH = "/v2/identity/identities";
export const IDENTITY_PATH = "/v2/identity/identities/:id";
export const QUOTE_EXECUTIONS_PATH = "/v2/profiles/:profile_id/quote-executions";
export const ORDER_PATH = "/v2/profiles/:profile_id/orders/:id";
export const INTERNAL_TRANSFER_PATH = "/v2/transfer/internal";
export const DEPOSIT_ADDRESSES_PATH = "/v2/transfer/deposit-addresses";
export const ORCHESTRATION_RULE_PATH = "/v2/orchestration/rules/:id";
export const ADMIN_PREFIX = "/__sandbox";
