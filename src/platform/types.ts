/** Normalised shapes the client hands out; the wire format stays inside `wire-parsers.ts`. */
import { IDENTITY_PATHS, SCOPES } from "../contract/index.ts";

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

/** A create's answer: the control it names, with what the answer said beside it. */
export interface CreatedControl extends IdentityControl {
  /** The answer's HTTP status (the contract's is 200). */
  readonly httpStatus: number;
  /** The identity the answer names, when it names one (the contract's record does not). */
  readonly identityId: string | null;
}

export interface Identity {
  readonly id: string;
  readonly createdAt: string | null;
  readonly userDisabled: boolean | null;
  readonly adminDisabled: boolean | null;
  readonly activeControls: IdentityControl[];
}

export {
  ACCEPTED_REASON_CODES,
  CONTROL_TYPES,
  CREATABLE_CONTROL_TYPES,
  type CreatableControlType,
  type ReasonCode,
} from "../contract/index.ts";

export const SCOPE_READ_IDENTITY = SCOPES.readIdentity;
export const SCOPE_READ_CONTROL = SCOPES.readControl;
export const SCOPE_WRITE_CONTROL = SCOPES.writeControl;

/** What read-only commands (plan, report) ask for. */
export const READ_SCOPES: readonly string[] = Object.freeze([
  SCOPE_READ_IDENTITY,
  SCOPE_READ_CONTROL,
]);
/** What writers (apply, reconcile --fix) ask for. */
export const WRITE_SCOPES: readonly string[] = Object.freeze([...READ_SCOPES, SCOPE_WRITE_CONTROL]);

/** Path templates: the platform's rate-limit keys, and ours. */
export const PATHS = IDENTITY_PATHS;
