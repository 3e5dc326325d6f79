/**
 * The diff rules: one identity's expected controls (from the mapping) against what the platform
 * holds. Pure; the findings stage feeds it rows from the SQL join of source ⟗ snapshot.
 */
import { type ExpectedControl, expectedControls } from "./mapping.ts";
import { KEPT_RESTRICTED, mayDeleteSellOnly } from "./restriction.ts";

/** Stable category names; documented in the README. Never rename one. */
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
  "orphaned_own_control",
  "contested",
] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];

export interface ObservedControl {
  readonly controlId: string;
  readonly type: string;
  readonly setBy: "client" | "service" | "unknown";
  readonly setByRaw: string;
  readonly isOverridable: boolean;
}

export interface IdentityState {
  readonly identityId: string;
  /** The source row's flags; null when the source has no (valid) row for this identity. */
  readonly source: { readonly userDisabled: boolean; readonly adminDisabled: boolean } | null;
  /**
   * found: observed on the platform; not_found: the platform answered 404 or a complete bulk
   * listing lacks it; error: reading it failed after retries.
   */
  readonly platform: "found" | "not_found" | "error";
  readonly platformDetail?: string | null;
  /** Active controls only. */
  readonly controls: readonly ObservedControl[];
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

const describeObserved = (o: ObservedControl) =>
  `${o.type} set_by ${o.setByRaw} is_overridable ${o.isOverridable}`;

const byControlId = (a: ObservedControl, b: ObservedControl) =>
  a.controlId < b.controlId ? -1 : a.controlId > b.controlId ? 1 : 0;

/**
 * Classifies one identity. Ownership (set_by, either spelling) is part of a control's identity:
 * a control of the other owner never stands in for an expected one. Matching is greedy and
 * deterministic (controls in id order, expectations in mapping order):
 *
 * 1. every expectation first takes an exact match (same owner, same is_overridable) → `in_sync`;
 * 2. an expectation left takes a SELL_ONLY of the same owner with other attributes →
 *    `attribute_mismatch`;
 * 3. else a SELL_ONLY with an unknown set_by → `attribute_mismatch` (report only, never a create:
 *    a person decides who owns it);
 * 4. else → `missing_client_control` (create) or `missing_service_control` (report only).
 *
 * Leftover SELL_ONLY controls are `unexpected_client_control`, `unexpected_service_control` or
 * (unknown set_by) `attribute_mismatch`. An unexpected overridable client control is prunable
 * unless deleting it would leave a flagged identity with no SELL_ONLY at all; then it is kept with
 * the detail {@link KEPT_RESTRICTED}.
 *
 * @example
 *   classifyIdentity({ identityId: "a", source: { userDisabled: true, adminDisabled: false },
 *     platform: "found", controls: [] })[0].finding // "missing_client_control"
 */
export function classifyIdentity(state: IdentityState): Finding[] {
  const others = state.controls
    .filter((c) => c.type !== "SELL_ONLY")
    .map((c) => `${c.type}:${c.setByRaw}`)
    .sort()
    .join(";");
  const base = { otherActiveControls: others, create: false, prunable: false };
  const expected = state.source ? expectedControls(state.source) : [];

  if (state.platform === "error") {
    return [
      {
        ...base,
        finding: "read_failed",
        expected: null,
        observed: null,
        detail: state.platformDetail ?? "reading the identity's controls failed",
      },
    ];
  }
  if (state.platform === "not_found") {
    return [
      {
        ...base,
        finding: "identity_not_found",
        expected: expected[0] ?? null,
        observed: null,
        detail: state.platformDetail ?? "the platform does not know this identity",
      },
    ];
  }

  const sellOnly = state.controls.filter((c) => c.type === "SELL_ONLY").sort(byControlId);

  if (!state.source) {
    return sellOnly.map((o) => ({
      ...base,
      finding: "unknown_to_source" as const,
      expected: null,
      observed: o,
      detail: `platform holds ${describeObserved(o)} but the source has no row for this identity`,
    }));
  }

  const out: Finding[] = [];
  const unmatched = new Set(sellOnly);
  const take = (test: (o: ObservedControl) => boolean) => {
    const hit = sellOnly.find((o) => unmatched.has(o) && test(o));
    if (hit) unmatched.delete(hit);
    return hit;
  };

  for (const e of expected) {
    const exact = take((o) => o.setBy === e.setBy && o.isOverridable === e.isOverridable);
    if (exact) {
      out.push({ ...base, finding: "in_sync", expected: e, observed: exact, detail: "" });
    }
  }
  const pending = expected.filter((e) => !out.some((f) => f.expected === e));
  for (const e of pending) {
    const near = take((o) => o.setBy === e.setBy) ?? take((o) => o.setBy === "unknown");
    if (near) {
      out.push({
        ...base,
        finding: "attribute_mismatch",
        expected: e,
        observed: near,
        detail: `expected SELL_ONLY set_by ${e.setBy.toUpperCase()} is_overridable ${e.isOverridable} (from ${e.flag}), found ${describeObserved(near)}`,
      });
    } else if (e.owner === "tool") {
      out.push({
        ...base,
        finding: "missing_client_control",
        expected: e,
        observed: null,
        detail: `${e.flag} is true`,
        create: true,
      });
    } else {
      out.push({
        ...base,
        finding: "missing_service_control",
        expected: e,
        observed: null,
        detail: `${e.flag} is true; the platform must migrate it`,
      });
    }
  }

  // Prunable controls are decided one by one in id order (the order the journal runs them in),
  // each against what would still stay, so a flagged identity always keeps one SELL_ONLY.
  const staying = new Set(sellOnly.map((o) => o.controlId));
  for (const o of sellOnly) {
    if (!unmatched.has(o)) continue;
    if (o.setBy === "client") {
      // With user_disabled true the expected client control took its match above: this is another.
      const why = state.source.userDisabled
        ? "a second active CLIENT SELL_ONLY (duplicate)"
        : `user_disabled is false but the platform holds ${describeObserved(o)}`;
      const kept = o.isOverridable && !mayDeleteSellOnly(state.source, staying, o.controlId);
      if (o.isOverridable && !kept) staying.delete(o.controlId);
      out.push({
        ...base,
        finding: "unexpected_client_control",
        expected: null,
        observed: o,
        detail: kept ? KEPT_RESTRICTED : why,
        prunable: o.isOverridable && !kept,
      });
    } else if (o.setBy === "service") {
      out.push({
        ...base,
        finding: "unexpected_service_control",
        expected: null,
        observed: o,
        detail: `admin_disabled is false but the platform holds ${describeObserved(o)}`,
      });
    } else {
      out.push({
        ...base,
        finding: "attribute_mismatch",
        expected: null,
        observed: o,
        detail: `unknown set_by "${o.setByRaw}" on an unexpected SELL_ONLY`,
      });
    }
  }
  return out;
}
