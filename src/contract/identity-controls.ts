/**
 * The platform's identity-control constants, written once and imported by the client
 * (`platform/`), the migration and the sandbox. `test/unit/contract.published-schema.test.ts`
 * checks each against the project's copy of the published schema.
 */

/** Every control type the platform knows (IdentityControlType). */
export const CONTROL_TYPES = ["SELL_ONLY", "CLOSED", "FROZEN", "DORMANT"] as const;
export type ControlType = (typeof CONTROL_TYPES)[number];

/** The types a client may create; FROZEN is the platform's own. */
export const CREATABLE_CONTROL_TYPES = ["SELL_ONLY", "CLOSED", "DORMANT"] as const;
export type CreatableControlType = (typeof CREATABLE_CONTROL_TYPES)[number];

/** The published reason codes (IdentityControlReasonCode), in the schema's order. */
export const REASON_CODES = [
  "OTHER",
  "END_USER_REQUEST",
  "INACTIVITY",
  "COMPLIANCE_KYC",
  "COMPLIANCE_EDD",
  "COMPLIANCE_SCREENING",
  "COMPLIANCE_INVESTIGATION",
  "COMPLIANCE_INCOMPLETE",
  "RISK_FRAUD",
  "LEGAL_ORDER",
  "ADMINISTRATIVE",
] as const;
export type PublishedReasonCode = (typeof REASON_CODES)[number];

/** Reason codes of the earlier preview schema, by the published name they stand for. */
export const PREVIEW_REASON_CODES: Readonly<Record<string, PublishedReasonCode>> = Object.freeze({
  ONBOARDING_INCOMPLETE: "COMPLIANCE_INCOMPLETE",
});

/** What a client may send: the published codes and the preview's spelling. */
export const ACCEPTED_REASON_CODES = [...REASON_CODES, "ONBOARDING_INCOMPLETE"] as const;
export type ReasonCode = (typeof ACCEPTED_REASON_CODES)[number];

/** set_by as the published schema spells it (IdentityControlSetBy). */
export const SET_BY = Object.freeze({
  client: "SET_BY_CLIENT",
  service: "SET_BY_SERVICE",
} as const);
/** set_by as the interface description spells it; clients accept both. */
export const SHORT_SET_BY = Object.freeze({ client: "CLIENT", service: "SERVICE" } as const);
