/** Normalised shapes the client hands out; the wire format stays inside `wire-parsers.ts`. */

export type SetBy = "client" | "service" | "unknown";

export interface IdentityControl {
  readonly id: string;
  /** A known type (SELL_ONLY, CLOSED, FROZEN, DORMANT) or an unknown one, verbatim. */
  readonly type: string;
  readonly setBy: SetBy;
  /** `set_by` exactly as the platform wrote it ("" when absent). */
  readonly setByRaw: string;
  readonly isOverridable: boolean;
  readonly reasonCode: string | null;
  readonly reason: string | null;
  readonly createdAt: string | null;
  readonly deletedAt: string | null;
}

export interface Identity {
  readonly id: string;
  readonly createdAt: string | null;
  readonly userDisabled: boolean | null;
  readonly adminDisabled: boolean | null;
  readonly activeControls: IdentityControl[];
}

export const CONTROL_TYPES = ["SELL_ONLY", "CLOSED", "FROZEN", "DORMANT"] as const;

/** Clients may create these; FROZEN is reserved to the platform. */
export const CREATABLE_CONTROL_TYPES = ["SELL_ONLY", "CLOSED", "DORMANT"] as const;
export type CreatableControlType = (typeof CREATABLE_CONTROL_TYPES)[number];

export const REASON_CODES = [
  "OTHER",
  "END_USER_REQUEST",
  "INACTIVITY",
  "COMPLIANCE_KYC",
  "COMPLIANCE_EDD",
  "COMPLIANCE_SCREENING",
  "COMPLIANCE_INVESTIGATION",
  "ONBOARDING_INCOMPLETE",
  "RISK_FRAUD",
  "LEGAL_ORDER",
  "ADMINISTRATIVE",
] as const;
export type ReasonCode = (typeof REASON_CODES)[number];

export const SCOPE_READ_IDENTITY = "identity:read_identity";
export const SCOPE_READ_CONTROL = "identity:read_identity_control";
export const SCOPE_WRITE_CONTROL = "identity:write_identity_control";

/** What read-only commands (plan, report) ask for. */
export const READ_SCOPES: readonly string[] = Object.freeze([
  SCOPE_READ_IDENTITY,
  SCOPE_READ_CONTROL,
]);
/** What writers (apply, reconcile --fix) ask for. */
export const WRITE_SCOPES: readonly string[] = Object.freeze([...READ_SCOPES, SCOPE_WRITE_CONTROL]);

/** Path templates: the platform's rate-limit keys, and ours. */
export const PATHS = {
  identities: "/v2/identity/identities",
  identity: "/v2/identity/identities/{id}",
  controls: "/v2/identity/controls",
} as const;
