/** Public types of the identity domain: identities, their controls, seeds and drift. */
export {
  CONTROL_TYPES,
  CREATABLE_CONTROL_TYPES as CLIENT_CONTROL_TYPES,
  PREVIEW_REASON_CODES,
  REASON_CODES,
} from "../shared.ts";

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

/**
 * What moves an identity's `updated_at` (the platform does not publish it): `all` (a control
 * created or deleted, the platform's own migration, a legacy field changed: the honest platform),
 * `identity-fields` (only the identity's own fields, legacy fields included; controls do not), or
 * `none` (nothing after creation).
 */
export const UPDATED_AT_POLICIES = ["all", "identity-fields", "none"] as const;
export type UpdatedAtPolicy = (typeof UPDATED_AT_POLICIES)[number];

export interface SeedOptions {
  migratedFraction?: number;
  driftFraction?: number;
  /** Fraction of the seeded identities whose platform legacy fields differ from the seed's flags. */
  legacyDriftFraction?: number;
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
  /** Identities whose platform legacy field was turned on, and turned off (legacy drift). */
  legacyDrift: { on: number; off: number };
}

export interface Integrity {
  /** Identities with more than one active CLIENT SELL_ONLY control (either spelling). */
  identitiesWithDuplicateClientSellOnly: number;
  /** Surplus active CLIENT SELL_ONLY controls beyond the first, summed over identities. */
  duplicateClientSellOnlyControls: number;
  activeClientSellOnly: number;
  activeServiceSellOnly: number;
}

export interface AddControlInput {
  type: string;
  set_by?: string;
  is_overridable?: boolean;
  reason_code?: string;
  reason?: string;
  deleted?: boolean;
}

/** The identity domain's seeding API; each method has an admin route twin under /__sandbox. */
export interface IdentityApi {
  seedIdentities(rows: Iterable<SeedIdentity>, opts?: SeedOptions): SeedReport;
  addControl(identityId: string, c: AddControlInput): ControlRecord;
  controlsOf(identityId: string, opts?: { includeDeleted?: boolean }): ControlRecord[];
  /** The platform's legacy fields of an identity, as its Identity answers them. */
  legacyFieldsOf(identityId: string): { user_disabled: boolean; admin_disabled: boolean };
  /**
   * Sets an identity's legacy fields (those given), as the platform's own UI or a legacy client
   * may meanwhile; returns them as the Identity now answers them. A field that changes moves
   * `updated_at` unless the updated_at policy is `none`.
   */
  setLegacyFields(
    identityId: string,
    fields: { user_disabled?: boolean; admin_disabled?: boolean },
  ): { user_disabled: boolean; admin_disabled: boolean };
  /** Deletes any control as the platform itself may, a non-overridable one included. */
  deleteControl(controlId: string): ControlRecord;
  /** Removes an identity and its controls: the platform no longer knows it. */
  removeIdentity(identityId: string): void;
}
