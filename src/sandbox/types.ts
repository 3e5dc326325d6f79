import { SCOPES } from "../contract/scopes.ts";
import type { ExtCounts, SandboxExtApi } from "./ext-types.ts";

/**
 * Public types of the sandbox: the options it starts with, the records it serves and the stats it
 * reports. Other engineers code against these names; keep them stable.
 */

/** One control as the platform answers it. `deleted_at` is omitted while the control is active. */
export interface ControlRecord {
  id: string;
  type: string;
  /**
   * Raw: "SET_BY_CLIENT"/"SET_BY_SERVICE" (the published spelling, the default), "CLIENT"/"SERVICE"
   * (the short spelling of the interface description), or anything an admin seed or drift put there.
   */
  set_by: string;
  is_overridable: boolean;
  reason_code: string;
  reason: string;
  created_at: string;
  deleted_at?: string;
}

export const IDENTITY_STATUSES = ["PENDING", "ERROR", "APPROVED", "DENIED", "DISABLED"] as const;
export type IdentityStatus = (typeof IDENTITY_STATUSES)[number];
export const IDENTITY_TYPES = ["PERSON", "INSTITUTION"] as const;
export type IdentityType = (typeof IDENTITY_TYPES)[number];

/**
 * An identity to seed. `summary_status` and `type` default to values drawn from the id (the same
 * id always gets the same ones: mostly APPROVED, mostly PERSON); `updated_at` to `created_at`.
 */
export type SeedIdentity = {
  id: string;
  user_disabled: boolean;
  admin_disabled: boolean;
  created_at?: string;
  updated_at?: string;
  summary_status?: IdentityStatus;
  type?: IdentityType;
};

/**
 * How the sandbox spells `set_by`: "published" (SET_BY_CLIENT / SET_BY_SERVICE, the published
 * schema's enum) or "short" (CLIENT / SERVICE, the interface description's, for rehearsals).
 */
export type SetBySpellingName = "published" | "short";
export const SET_BY_SPELLINGS: readonly SetBySpellingName[] = ["published", "short"];

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
  /** Default: one read-write and one read-only client with random secrets. */
  clients?: SandboxClient[];
  /** Seed of the fault draws; default `seed`. */
  faultSeed?: number;
  /** How set_by is spelled in answers and seeds; default "published" (SET_BY_CLIENT...). */
  setBySpelling?: SetBySpellingName;
}

export interface SeedOptions {
  migratedFraction?: number;
  driftFraction?: number;
  seed?: number;
}

/** Kinds of drift the seeder injects; each is counted in {@link SeedReport.drift}. */
export const DRIFT_KINDS = [
  /** A CLIENT SELL_ONLY on an identity whose user_disabled is false. */
  "client_control_without_flag",
  /** A SERVICE SELL_ONLY on an identity whose admin_disabled is false. */
  "service_control_without_flag",
  /** An admin_disabled identity migrated without its SERVICE control. */
  "service_control_missing",
  /** A CLIENT SELL_ONLY with is_overridable false. */
  "client_not_overridable",
  /** The migration controls spelled the other way (CLIENT / SERVICE under the published spelling). */
  "set_by_other_spelling",
  /** A SELL_ONLY with set_by SET_BY_PARTNER (unknown to the schema). */
  "unknown_set_by",
  /** Two active CLIENT SELL_ONLY controls on one identity. */
  "duplicate_client_sell_only",
  /** An extra CLOSED control (CLIENT, overridable). */
  "extra_closed",
  /** An extra DORMANT control (CLIENT, overridable). */
  "extra_dormant",
  /** An extra FROZEN control (SERVICE, not overridable). */
  "extra_frozen",
] as const;
export type DriftKind = (typeof DRIFT_KINDS)[number];

export interface SeedReport {
  /** Identities added by this call. */
  identities: number;
  /** Rows skipped because an identity with that id already existed. */
  skippedExisting: number;
  userDisabled: number;
  adminDisabled: number;
  /** Identities with at least one flag. */
  flagged: number;
  /** Flagged identities whose flags were converted to controls (the migrated fraction). */
  migrated: number;
  /** Flagged identities left without any migration control. */
  unmigrated: number;
  /** Controls created by the migration (drift excluded). */
  migrationControls: { client: number; service: number };
  /** Identities that received drift, and the count per drift kind. */
  driftIdentities: number;
  drift: Record<DriftKind, number>;
  /** All controls created by this call, migration and drift. */
  controlsCreated: number;
}

export interface Integrity {
  /** Identities with more than one active CLIENT SELL_ONLY control (either spelling). */
  identitiesWithDuplicateClientSellOnly: number;
  /** Surplus active CLIENT SELL_ONLY controls beyond the first, summed over identities. */
  duplicateClientSellOnlyControls: number;
  activeClientSellOnly: number;
  activeServiceSellOnly: number;
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
  /** Records of the rest of the interface (exchange, transfers, deposit addresses, rules). */
  ext: ExtCounts;
  integrity: Integrity;
  memory: { rssBytes: number; heapUsedBytes: number };
}

export interface AddControlInput {
  type: string;
  set_by?: string;
  is_overridable?: boolean;
  reason_code?: string;
  reason?: string;
  deleted?: boolean;
}

export interface Sandbox extends SandboxExtApi {
  readonly apiUrl: string;
  readonly tokenUrl: string;
  readonly adminUrl: string;
  readonly credentials: {
    clientId: string;
    clientSecret: string;
    readOnlyClientId: string;
    readOnlyClientSecret: string;
  };
  seedIdentities(rows: Iterable<SeedIdentity>, opts?: SeedOptions): SeedReport;
  addControl(identityId: string, c: AddControlInput): ControlRecord;
  controlsOf(identityId: string, opts?: { includeDeleted?: boolean }): ControlRecord[];
  setFaults(f: Partial<Faults>): void;
  setLimits(l: Partial<Limits>): void;
  revokeTokens(): void;
  reset(): void;
  stats(): SandboxStats;
  /** Requests per outcome in [from, to] (epoch ms), for one endpoint path or all of them. */
  requestsIn(window: { from: number; to?: number; endpoint?: string }): RequestWindowCounts;
  close(): Promise<void>;
}

export { SCOPES } from "../contract/scopes.ts";

/** The scopes a read-only client holds: every read of the interface, no write. */
export const READ_ONLY_SCOPES: readonly string[] = Object.freeze([
  SCOPES.readIdentity,
  SCOPES.readControl,
  SCOPES.readQuoteExecution,
  SCOPES.readOrder,
  SCOPES.readDepositAddress,
]);

export {
  CONTROL_TYPES,
  CREATABLE_CONTROL_TYPES as CLIENT_CONTROL_TYPES,
  PREVIEW_REASON_CODES,
  REASON_CODES,
} from "../contract/identity-controls.ts";
