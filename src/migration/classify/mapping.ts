/**
 * The documented migration mapping (§9), as data. Everything that decides what a legacy flag means
 * reads this table; nothing else hard-codes set_by or is_overridable.
 */

import { CREATABLE_CONTROL_TYPES } from "../../contract/index.ts";

export type SetBy = "client" | "service";

export interface ExpectedControl {
  readonly type: "SELL_ONLY";
  readonly setBy: SetBy;
  readonly isOverridable: boolean;
  /** Which legacy flag produces it. */
  readonly flag: "user_disabled" | "admin_disabled";
  /** Who creates it: the tool creates client controls; the platform migrates service ones. */
  readonly owner: "tool" | "platform";
}

export interface LegacyFlags {
  readonly userDisabled: boolean;
  readonly adminDisabled: boolean;
}

export const MIGRATION_MAPPING: readonly ExpectedControl[] = Object.freeze([
  Object.freeze({
    flag: "user_disabled",
    type: "SELL_ONLY",
    setBy: "client",
    isOverridable: true,
    owner: "tool",
  } as const),
  Object.freeze({
    flag: "admin_disabled",
    type: "SELL_ONLY",
    setBy: "service",
    isOverridable: false,
    owner: "platform",
  } as const),
]);

/**
 * The controls an identity should hold, given its legacy flags.
 *
 * @example
 *   expectedControls({ userDisabled: true, adminDisabled: false })
 *   // [{ type: "SELL_ONLY", setBy: "client", isOverridable: true, flag: "user_disabled", owner: "tool" }]
 */
export function expectedControls(flags: LegacyFlags): ExpectedControl[] {
  return MIGRATION_MAPPING.filter((m) =>
    m.flag === "user_disabled" ? flags.userDisabled : flags.adminDisabled,
  );
}

/** Control types a client may create; FROZEN is the platform's alone. */
export const CLIENT_CREATABLE_TYPES: ReadonlySet<string> = new Set(CREATABLE_CONTROL_TYPES);
