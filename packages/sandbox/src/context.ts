import { randomUUID } from "node:crypto";
import type { Socket } from "node:net";
import { DepositAddressStore } from "./deposit-address/deposit-address-store.ts";
import { ExchangeStore } from "./exchange/exchange-store.ts";
import { effectiveRps } from "./gateway/endpoint-limits.ts";
import { FaultInjector } from "./gateway/faults.ts";
import { RateLimiter } from "./gateway/rate-limiter.ts";
import { RequestStats } from "./gateway/request-stats.ts";
import type { ResolvedSeedOptions } from "./identity/identity-seed.ts";
import { SandboxStore } from "./identity/identity-store.ts";
import { type SetBySpelling, setBySpelling } from "./identity/set-by.ts";
import { OAuthIssuer } from "./oauth/oauth-issuer.ts";
import { OrchestrationStore } from "./orchestration/orchestration-store.ts";
import { CursorCodec } from "./paging/cursor-codec.ts";
import { TransferStore } from "./transfer/transfer-store.ts";
import type { AutoMigrateStats, Limits, SandboxClient, SandboxOptions } from "./types.ts";

/**
 * The state of one sandbox instance: every domain's store and the gateway's machinery. Routes,
 * admin routes, hooks and the programmatic handle all reach the state through it, and only
 * through it.
 */
export interface SandboxContext {
  readonly identities: SandboxStore;
  readonly exchange: ExchangeStore;
  readonly transfers: TransferStore;
  readonly addresses: DepositAddressStore;
  readonly rules: OrchestrationStore;
  /** Profiles named by any seed: the profile-scoped endpoints answer 404 for any other. */
  readonly profiles: Set<string>;
  /** The customer every record belongs to: the sandbox emulates a single platform account. */
  readonly customerId: string;
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
  /** Monotonic clock for records seeded without created_at: never two equal, never backwards. */
  readonly nextCreatedAt: () => number;
  /** How this sandbox spells set_by in what it creates (API creates, seeds, admin defaults). */
  readonly setBy: SetBySpelling;
  /** Seed options used when a seed names none. */
  readonly seedDefaults: ResolvedSeedOptions;
  readonly startedAt: string;
  /** The background migration's progress (`identity/auto-migrate.ts`), for stats. */
  readonly autoMigrate: AutoMigrateStats;
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

function monotonicClock(): () => number {
  let last = 0;
  return () => {
    const now = Date.now();
    last = now > last ? now : last + 1;
    return last;
  };
}

/**
 * A fresh context for checked options: empty stores, limiters reading `limits` live.
 *
 * @example
 *   const ctx = createContext(options, limits, defaultClients());
 */
export function createContext(
  options: SandboxOptions,
  limits: Limits,
  clients: readonly SandboxClient[],
): SandboxContext {
  const seed = options.seed ?? 1;
  const setBy = setBySpelling(options.setBySpelling);
  const customerId = randomUUID();
  return {
    identities: new SandboxStore(() => limits.updatedAtPolicy),
    exchange: new ExchangeStore(),
    transfers: new TransferStore(customerId),
    addresses: new DepositAddressStore(),
    rules: new OrchestrationStore(),
    profiles: new Set(),
    customerId,
    cursors: new CursorCodec(),
    issuer: new OAuthIssuer(clients, limits.tokenTtlS),
    faults: new FaultInjector(options, options.faultSeed ?? seed),
    limits,
    apiLimiter: new RateLimiter((endpoint) => ({
      rps: effectiveRps(limits, endpoint),
      windowS: limits.rateWindowS,
      penaltyS: limits.penaltyS,
    })),
    tokenLimiter: new RateLimiter(() => ({
      rps: limits.tokenRateLimitRps,
      windowS: limits.rateWindowS,
      penaltyS: limits.penaltyS,
    })),
    stats: new RequestStats(),
    writes: { creates: 0, deletes: 0 },
    hanging: new Set(),
    nextCreatedAt: monotonicClock(),
    setBy,
    seedDefaults: {
      migratedFraction: options.migratedFraction ?? 0.5,
      driftFraction: options.driftFraction ?? 0,
      legacyDriftFraction: options.legacyDriftFraction ?? 0,
      seed,
      setBy,
    },
    startedAt: new Date().toISOString(),
    autoMigrate: { rate: 0, done: 0, left: 0 },
  };
}
