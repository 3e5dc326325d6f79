/**
 * The diff rules: one identity's expected controls (from the mapping) against what the platform
 * holds. Pure; the findings stage feeds it rows from the SQL join of source ⟗ snapshot.
 */

import {
  FINDING_KINDS,
  type Finding,
  type FindingKind,
  type ObservedControl,
} from "./finding-types.ts";
import { type ExpectedControl, expectedControls } from "./mapping.ts";
import { matchingOrder, type PlatformLegacy } from "./three-way.ts";
import { leftoverFindings, pendingFinding, userSideWithoutControl } from "./three-way-rules.ts";

export type { Finding, FindingKind, ObservedControl };
export { FINDING_KINDS };

/** Stable category names; documented in the README. Never rename one. */

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
  /** The platform's legacy fields read with the identity; absent or null: not read (two-way rules). */
  readonly platformLegacy?: PlatformLegacy | null;
  /** Control ids this tool created (from the journal): the extras `--prune` deletes first. */
  readonly toolCreated?: ReadonlySet<string>;
  /**
   * false (`--no-wait-for-platform`): a CLIENT control the platform's migration would create is
   * `missing_client_control`, created now, not `awaiting_platform_migration`. Default true.
   */
  readonly waitForPlatform?: boolean;
}

const describeObserved = (o: ObservedControl) =>
  `${o.type} set_by ${o.setByRaw} is_overridable ${o.isOverridable}`;

/**
 * Classifies one identity. Ownership (set_by, either spelling) is part of a control's identity:
 * a control of the other owner never stands in for an expected one. Matching is greedy and
 * deterministic (controls in id order, CLIENT ones the one to keep first: `matchingOrder`;
 * expectations in mapping order):
 *
 * 1. every expectation first takes an exact match (same owner, same is_overridable) → `in_sync`;
 * 2. an expectation left takes a SELL_ONLY of the same owner with other attributes →
 *    `attribute_mismatch`;
 * 3. else a SELL_ONLY with an unknown set_by → `attribute_mismatch` (report only, never a create:
 *    a person decides who owns it);
 * 4. else, weighed against the platform's legacy field (`pendingFinding`):
 *    `awaiting_platform_migration`, `missing_client_control` (create), `missing_service_control`
 *    or `platform_unaware_of_admin_flag`.
 *
 * A cleared identity the platform's field still marks is `platform_will_restrict`. Leftover
 * SELL_ONLY controls are `duplicate_client_control`, `unexpected_client_control`,
 * `unexpected_service_control`, `source_behind_platform` or (unknown set_by)
 * `attribute_mismatch` (`leftoverFindings`). An overridable client control is prunable unless
 * deleting it would leave a flagged identity with no SELL_ONLY at all (then it is kept with the
 * detail `KEPT_RESTRICTED`), or the platform's user_disabled is still true.
 *
 * @example
 *   classifyIdentity({ identityId: "a", source: { userDisabled: true, adminDisabled: false },
 *     platform: "found", controls: [] })[0].finding // "missing_client_control"
 */
export function classifyIdentity(state: IdentityState): Finding[] {
  const base: FindingBase = {
    otherActiveControls: otherActiveControls(state.controls),
    create: false,
    prunable: false,
  };
  const expected = state.source ? expectedControls(state.source) : [];
  if (state.platform !== "found") return [unreadFinding(state, base, expected)];

  const legacy = state.platformLegacy ?? null;
  const sellOnly = matchingOrder(
    state.controls.filter((c) => c.type === "SELL_ONLY"),
    state.toolCreated ?? NONE,
  );

  if (!state.source) {
    return sellOnly.map((o) => ({
      ...base,
      finding: "unknown_to_source" as const,
      expected: null,
      observed: o,
      detail: `platform holds ${describeObserved(o)} but the source has no row for this identity`,
    }));
  }

  const unmatched = new Set(sellOnly);
  const out = matchExpected(expected, sellOnly, unmatched, base).map((m) =>
    "finding" in m
      ? m
      : { ...base, ...pendingFinding(m.expected, legacy, state.waitForPlatform ?? true) },
  );
  const clientHeld = sellOnly.some((o) => o.setBy === "client");
  const restrict = userSideWithoutControl(state.source, legacy, clientHeld);
  if (restrict) out.push({ ...base, ...restrict });
  out.push(
    ...leftoverFindings({
      sellOnly,
      unmatched,
      source: state.source,
      legacy,
      describe: describeObserved,
    }).map((f) => ({ ...base, ...f })),
  );
  return out;
}

/** What every finding of one identity shares before its rule sets it. */
type FindingBase = Pick<Finding, "otherActiveControls" | "create" | "prunable">;

/** The non-SELL_ONLY active controls, e.g. "FROZEN:SERVICE;DORMANT:CLIENT", sorted. */
const otherActiveControls = (controls: readonly ObservedControl[]) =>
  controls
    .filter((c) => c.type !== "SELL_ONLY")
    .map((c) => `${c.type}:${c.setByRaw}`)
    .sort()
    .join(";");

/** The one finding of an identity the platform did not show: not found, or its read failed. */
function unreadFinding(
  state: IdentityState,
  base: FindingBase,
  expected: readonly ExpectedControl[],
): Finding {
  if (state.platform === "error") {
    return {
      ...base,
      finding: "read_failed",
      expected: null,
      observed: null,
      detail: state.platformDetail ?? "reading the identity's controls failed",
    };
  }
  return {
    ...base,
    finding: "identity_not_found",
    expected: expected[0] ?? null,
    observed: null,
    detail: state.platformDetail ?? "the platform does not know this identity",
  };
}

/** An expectation no control stands in for: its finding is weighed against the legacy field. */
interface Unmatched {
  readonly expected: ExpectedControl;
}

/**
 * Rules 1–3: every expectation takes an exact match first, then one left takes a near miss of
 * the same owner or of an unknown owner. Controls taken leave `unmatched`; an expectation nothing
 * stands in for is returned as `Unmatched`, in expectation order after the exact matches.
 */
function matchExpected(
  expected: readonly ExpectedControl[],
  sellOnly: readonly ObservedControl[],
  unmatched: Set<ObservedControl>,
  base: FindingBase,
): (Finding | Unmatched)[] {
  const take = (test: (o: ObservedControl) => boolean) => {
    const hit = sellOnly.find((o) => unmatched.has(o) && test(o));
    if (hit) unmatched.delete(hit);
    return hit;
  };
  const out: (Finding | Unmatched)[] = [];
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
    } else {
      out.push({ expected: e });
    }
  }
  return out;
}

const NONE: ReadonlySet<string> = new Set();

/**
 * Whether the platform's legacy fields would change a found identity's findings the way the
 * strategy reads them: a flagged side with no control of its owner (nor one of unknown owner) to
 * stand in, which the two-way rules call `missing_client_control` or `missing_service_control`
 * and the three-way rules may call `awaiting_platform_migration` or
 * `platform_unaware_of_admin_flag`. Pure; the per-identity strategy reads such identities by id.
 *
 * @example
 *   dependsOnPlatformLegacy({ identityId: "c", source: { userDisabled: false, adminDisabled: true },
 *     platform: "found", controls: [] }) // true
 */
export function dependsOnPlatformLegacy(state: IdentityState): boolean {
  if (state.platform !== "found" || !state.source) return false;
  return classifyIdentity({ ...state, platformLegacy: null }).some(
    (f) =>
      f.observed === null &&
      (f.finding === "missing_client_control" || f.finding === "missing_service_control"),
  );
}
