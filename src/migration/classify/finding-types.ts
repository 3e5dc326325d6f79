/**
 * The finding kinds and the shapes the diff rules pass around, apart from the rules themselves
 * (`classify.ts`, `three-way-rules.ts`), so the rule modules import types without a circle.
 */
import type { ExpectedControl } from "./mapping.ts";

/**
 * The findings a finished three-way classification can add, in the order reports list them.
 * Never rename one: reports, `--json`, metrics and exit codes use them.
 */
export const THREE_WAY_FINDINGS = [
  "awaiting_platform_migration",
  "platform_will_restrict",
  "duplicate_client_control",
  "platform_unaware_of_admin_flag",
  "source_behind_platform",
] as const;

export const FINDING_KINDS = [
  "in_sync",
  "missing_client_control",
  "missing_service_control",
  "unexpected_client_control",
  "unexpected_service_control",
  "attribute_mismatch",
  "identity_not_found",
  "unknown_to_source",
  "invalid_source_row",
  "source_warning",
  "read_failed",
  ...THREE_WAY_FINDINGS,
  "orphaned_own_control",
  "contested",
  // A complete --since-last read found a change the incremental runs missed (issue 55).
  "stale_incremental",
] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];

export interface ObservedControl {
  readonly controlId: string;
  readonly type: string;
  readonly setBy: "client" | "service" | "unknown";
  readonly setByRaw: string;
  readonly isOverridable: boolean;
}

export interface Finding {
  readonly finding: FindingKind;
  readonly expected: ExpectedControl | null;
  readonly observed: ObservedControl | null;
  /** Non-SELL_ONLY active controls, e.g. "FROZEN:SERVICE;DORMANT:CLIENT"; shown, never touched. */
  readonly otherActiveControls: string;
  readonly detail: string;
  /** The tool's own work: create a missing client control. */
  readonly create: boolean;
  /**
   * May be deleted with --prune: an unexpected, overridable, client-set SELL_ONLY whose delete
   * leaves a flagged identity with another SELL_ONLY (see `mayDeleteSellOnly`).
   */
  readonly prunable: boolean;
}
