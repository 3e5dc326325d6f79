import type { DepositAddressApi } from "./deposit-address/types.ts";
import type { ExchangeApi } from "./exchange/types.ts";
import type {
  IdentityApi,
  Integrity,
  SetBySpellingName,
  UpdatedAtPolicy,
} from "./identity/types.ts";
import type { OrchestrationApi } from "./orchestration/types.ts";
import { SCOPES } from "./shared.ts";
import type { TransferApi } from "./transfer/types.ts";

/**
 * Public types of the sandbox: the options it starts with, the records it serves and the stats it
 * reports. Other engineers code against these names; keep them stable.
 */

export type DuplicatePolicy = "allow" | "reject";

export interface Faults {
  latencyMs: number;
  latencyJitterMs: number;
  failRate: number;
  hangRate: number;
  ambiguousRate: number;
}

export interface Limits {
  rateLimitRps: number;
  tokenRateLimitRps: number;
  rateWindowS: number;
  penaltyS: number;
  duplicatePolicy: DuplicatePolicy;
  /**
   * What moves an identity's updated_at: "all" (controls, the platform's migration, legacy
   * fields; the default), "identity-fields" (only the identity's own fields, legacy ones
   * included) or "none" (nothing after creation).
   */
  updatedAtPolicy: UpdatedAtPolicy;
  tokenTtlS: number;
  /**
   * Per-endpoint requests/s overriding the platform's table (endpoint path → rps, 0 = unlimited);
   * see `effectiveRps`. Setting it replaces the whole table.
   */
  endpointRateLimits: Readonly<Record<string, number>>;
}

export interface SandboxClient {
  clientId: string;
  clientSecret: string;
  scopes: string[];
}

export interface SandboxOptions extends Partial<Faults>, Partial<Limits> {
  /** Default "127.0.0.1". */
  host?: string;
  /** Default 0: the OS picks a free port. */
  port?: number;
  /** Synthetic identities to seed at start, via `syntheticIdentities(n, seed)`. */
  identities?: number;
  /** Default 1. */
  seed?: number;
  /** Fraction of flagged identities auto-migrated to controls; default 0.5. */
  migratedFraction?: number;
  /** Fraction of identities with injected drift; default 0. */
  driftFraction?: number;
  /**
   * Fraction of identities whose platform legacy fields (user_disabled, admin_disabled) differ
   * from the seeded source flags, half turned on and half turned off; default 0.
   */
  legacyDriftFraction?: number;
  /** Identities a second the platform's background migration turns into controls; default 0 (off). */
  autoMigrateRate?: number;
  /** Default: one read-write and one read-only client with random secrets. */
  clients?: SandboxClient[];
  /** Seed of the fault draws; default `seed`. */
  faultSeed?: number;
  /** How set_by is spelled in answers and seeds; default "published" (SET_BY_CLIENT...). */
  setBySpelling?: SetBySpellingName;
}

export interface PenaltyEntry {
  client: string;
  endpoint: string;
  until: string;
}

/** Counts of requests to one endpoint (or all) inside a time window. */
export interface RequestWindowCounts {
  /** Requests that passed the rate limiter and reached the endpoint's handling. */
  served: number;
  /** The 429 answers that started a penalty (the request over the limit). */
  rateLimited: number;
  /** 429 answers during a penalty; they never reached the endpoint. */
  refusedByPenalty: number;
}

export interface SandboxStats {
  startedAt: string;
  identities: number;
  controls: { total: number; active: number };
  /** "METHOD /route/template" → status code (or "hang"/"dropped") → count. */
  requests: Record<string, Record<string, number>>;
  /** Endpoint path → requests that reached it (passed the rate limiter). */
  served: Record<string, number>;
  tokensIssued: number;
  /** Endpoint path → every 429 answered (penalty starts plus refusals during a penalty). */
  rateLimited: Record<string, number>;
  /** Endpoint path → 429 answers refused because a penalty was running. */
  refusedByPenalty: Record<string, number>;
  penalised: PenaltyEntry[];
  faults: {
    latency: number;
    fail5xx: number;
    hang: number;
    ambiguous: number;
    revocations: number;
  };
  writes: { creates: number; deletes: number };
  /** Records of the other domains: profiles, exchange, transfers, deposit addresses, rules. */
  records: RecordCounts;
  integrity: Integrity;
  /** The background migration (`autoMigrateRate`): identities done and left. */
  autoMigrate: AutoMigrateStats;
  memory: { rssBytes: number; heapUsedBytes: number };
}

/** Progress of the platform's background migration in the sandbox. */
export interface AutoMigrateStats {
  /** Identities a second; 0 when off. */
  rate: number;
  /** Identities migrated so far. */
  done: number;
  /** Identities whose legacy field is true and that held no matching control, still to do. */
  left: number;
}

/** Counts of the records outside the identity domain, for stats. */
export interface RecordCounts {
  profiles: number;
  quoteExecutions: number;
  orders: number;
  transfers: number;
  depositAddresses: number;
  orchestrationRules: { active: number; deleted: number };
}

/** The sandbox-wide controls; each has an admin route twin under /__sandbox. */
export interface AdminApi {
  setFaults(f: Partial<Faults>): void;
  setLimits(l: Partial<Limits>): void;
  revokeTokens(): void;
  reset(): void;
  stats(): SandboxStats;
  /** Requests per outcome in [from, to] (epoch ms), for one endpoint path or all of them. */
  requestsIn(window: { from: number; to?: number; endpoint?: string }): RequestWindowCounts;
}

/** A running sandbox: where it listens, its credentials, and every domain's seeding API. */
export interface Sandbox
  extends IdentityApi,
    ExchangeApi,
    TransferApi,
    DepositAddressApi,
    OrchestrationApi,
    AdminApi {
  readonly apiUrl: string;
  readonly tokenUrl: string;
  readonly adminUrl: string;
  readonly credentials: {
    clientId: string;
    clientSecret: string;
    readOnlyClientId: string;
    readOnlyClientSecret: string;
  };
  /**
   * Starts the platform's background migration at `rate` identities a second, as `autoMigrateRate`
   * does at start (0 stops it): its work list is taken now. For a rehearsal that needs the
   * migration to begin at a moment it chooses, whatever the machine's load.
   */
  migrateAtRate(rate: number): void;
  close(): Promise<void>;
}

export { SCOPES } from "./shared.ts";

/** The scopes a read-only client holds: every read of the interface, no write. */
export const READ_ONLY_SCOPES: readonly string[] = Object.freeze([
  SCOPES.readIdentity,
  SCOPES.readControl,
  SCOPES.readQuoteExecution,
  SCOPES.readOrder,
  SCOPES.readDepositAddress,
]);
