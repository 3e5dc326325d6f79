/**
 * Which control found on an identity may stand for a pending create: only the one the mapping
 * expects (`mapping.ts`): set by the CLIENT, of the create's type, overridable, active. A
 * non-overridable CLIENT SELL_ONLY, or one set by anyone else, is reported as found (the diff
 * rules call it `attribute_mismatch`, ...) and never adopted.
 */
import type { IdentityControl } from "../../platform/index.ts";

/**
 * @example
 *   isExpectedClientControl({ type: "SELL_ONLY", setBy: "client", isOverridable: false, ... }, "SELL_ONLY")
 *   // false: the next plan would call it attribute_mismatch
 */
export function isExpectedClientControl(c: IdentityControl, type: string): boolean {
  return c.type === type && c.setBy === "client" && c.isOverridable && !c.deletedAt;
}
