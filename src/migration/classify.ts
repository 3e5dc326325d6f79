/**
 * The diff rules: one identity's expected controls (from the mapping) against what the platform
 * holds. Pure; the findings stage feeds it rows from the SQL join of source ⟗ snapshot.
 */
import { type ExpectedControl, expectedControls } from "./mapping.ts";

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
  /** May be deleted with --prune: an unexpected, overridable, client-set SELL_ONLY. */
  readonly prunable: boolean;
}

const describeObserved = (o: ObservedControl) =>
  `${o.type} set_by ${o.setByRaw} is_overridable ${o.isOverridable}`;

/**
 * Classifies one identity. Matching is greedy and deterministic: exact matches first, then a
 * present SELL_ONLY with other attributes (attribute_mismatch, report only: the identity is already
 * restricted and a person must decide), then what is left over on either side.
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

  const sellOnly = [...state.controls]
    .filter((c) => c.type === "SELL_ONLY")
    .sort((a, b) => (a.controlId < b.controlId ? -1 : a.controlId > b.controlId ? 1 : 0));

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
  const pending: ExpectedControl[] = [];

  for (const e of expected) {
    const hit = sellOnly.find(
      (o) => unmatched.has(o) && o.setBy === e.setBy && o.isOverridable === e.isOverridable,
    );
    if (hit) {
      unmatched.delete(hit);
      out.push({ ...base, finding: "in_sync", expected: e, observed: hit, detail: "" });
    } else {
      pending.push(e);
    }
  }

  for (const e of pending) {
    // Prefer a near miss with the same set_by, then an unknown set_by, then the other party's.
    const rank = (o: ObservedControl) => (o.setBy === e.setBy ? 0 : o.setBy === "unknown" ? 1 : 2);
    const near = sellOnly.filter((o) => unmatched.has(o)).sort((a, b) => rank(a) - rank(b))[0];
    if (near) {
      unmatched.delete(near);
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

  const sawClientMatch = out.some((f) => f.finding === "in_sync" && f.observed?.setBy === "client");
  for (const o of sellOnly) {
    if (!unmatched.has(o)) continue;
    if (o.setBy === "client") {
      const duplicate = sawClientMatch;
      out.push({
        ...base,
        finding: "unexpected_client_control",
        expected: null,
        observed: o,
        detail: duplicate
          ? "a second active CLIENT SELL_ONLY (duplicate)"
          : `user_disabled is false but the platform holds ${describeObserved(o)}`,
        prunable: o.isOverridable,
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
