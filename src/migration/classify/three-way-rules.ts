/**
 * The diff rules' three-way cases (see `three-way.ts` for the tables), as pure functions the
 * classifier (`classify.ts`) calls: what a missing expectation becomes, what the platform will do
 * to an identity the client has cleared, and what each SELL_ONLY left unmatched is.
 */
import type { Finding, ObservedControl } from "./finding-types.ts";
import { type ExpectedControl, type LegacyFlags, MIGRATION_MAPPING } from "./mapping.ts";
import { KEPT_RESTRICTED, mayDeleteSellOnly } from "./restriction.ts";
import {
  AWAITING_CLIENT_DETAIL,
  AWAITING_SERVICE_DETAIL,
  BEHIND_DETAIL,
  DUPLICATE_DETAIL,
  LEGACY_STILL_TRUE,
  type PlatformLegacy,
  UNAWARE_DETAIL,
  WILL_RESTRICT_DETAIL,
} from "./three-way.ts";

/** A finding without the identity-wide column the classifier adds. */
export type RuleFinding = Omit<Finding, "otherActiveControls">;

const CLIENT_MAPPING = MIGRATION_MAPPING.find((m) => m.setBy === "client") ?? null;

/**
 * An expected control that no SELL_ONLY stands in for: the tool's own to create, unless the
 * platform's field says its migration will create it (`awaiting_platform_migration`) and the tool
 * waits for it (`wait`, the default; `--no-wait-for-platform` creates it now); a SERVICE
 * one the platform will create, will never create, or (field not read) must migrate.
 *
 * @example
 *   pendingFinding(MIGRATION_MAPPING[0], { userDisabled: true, adminDisabled: false }).finding
 *   // "awaiting_platform_migration"
 */
export function pendingFinding(
  e: ExpectedControl,
  legacy: PlatformLegacy | null,
  wait = true,
): RuleFinding {
  const none = { expected: e, observed: null, create: false, prunable: false };
  const field = e.flag === "user_disabled" ? legacy?.userDisabled : legacy?.adminDisabled;
  if (field === true && (wait || e.owner !== "tool")) {
    const detail = e.owner === "tool" ? AWAITING_CLIENT_DETAIL : AWAITING_SERVICE_DETAIL;
    return { ...none, finding: "awaiting_platform_migration", detail };
  }
  if (e.owner === "tool") {
    return {
      ...none,
      finding: "missing_client_control",
      detail: `${e.flag} is true`,
      create: true,
    };
  }
  if (field === false)
    return { ...none, finding: "platform_unaware_of_admin_flag", detail: UNAWARE_DETAIL };
  return {
    ...none,
    finding: "missing_service_control",
    detail: `${e.flag} is true; the platform must migrate it`,
  };
}

/**
 * The user_disabled side of an identity the client has cleared that holds no CLIENT SELL_ONLY:
 * `platform_will_restrict` when the platform's field is still true, else nothing.
 */
export function userSideWithoutControl(
  source: LegacyFlags,
  legacy: PlatformLegacy | null,
  clientHeld: boolean,
): RuleFinding | null {
  if (source.userDisabled || clientHeld || legacy?.userDisabled !== true) return null;
  return {
    finding: "platform_will_restrict",
    expected: CLIENT_MAPPING,
    observed: null,
    detail: WILL_RESTRICT_DETAIL,
    create: false,
    prunable: false,
  };
}

export interface Leftovers {
  /** The identity's active SELL_ONLY controls in matching order (`matchingOrder`). */
  readonly sellOnly: readonly ObservedControl[];
  /** Those no expectation took. */
  readonly unmatched: ReadonlySet<ObservedControl>;
  readonly source: LegacyFlags;
  readonly legacy: PlatformLegacy | null;
  readonly describe: (o: ObservedControl) => string;
}

/**
 * What each unmatched SELL_ONLY is. Of two or more active CLIENT ones the identity keeps one (the
 * matched one, else the first in matching order) and the others are `duplicate_client_control`;
 * the kept one, unmatched, is `unexpected_client_control` (never pruned while the platform's
 * user_disabled is true). Prunable controls are decided one by one, each against what would still
 * stay, so a flagged identity always keeps one SELL_ONLY. A SERVICE one the platform's
 * admin_disabled explains is `source_behind_platform`.
 */
export function leftoverFindings(l: Leftovers): RuleFinding[] {
  const out: RuleFinding[] = [];
  const staying = new Set(l.sellOnly.map((o) => o.controlId));
  const clients = l.sellOnly.filter((o) => o.setBy === "client");
  const keeper = clients.find((o) => !l.unmatched.has(o)) ?? clients[0];
  const behind = !l.source.adminDisabled && l.legacy?.adminDisabled === true;
  const base = { expected: null, create: false };
  const prune = (o: ObservedControl) => {
    const kept = o.isOverridable && !mayDeleteSellOnly(l.source, staying, o.controlId);
    if (o.isOverridable && !kept) staying.delete(o.controlId);
    return { kept, prunable: o.isOverridable && !kept };
  };
  let behindSeen = false;
  // The extras first, the kept one last: each prune is weighed against what still stays.
  const order = [...l.sellOnly.filter((o) => o !== keeper), ...(keeper ? [keeper] : [])];
  for (const o of order) {
    if (!l.unmatched.has(o)) continue;
    if (o.setBy === "client" && o !== keeper) {
      const { kept, prunable } = prune(o);
      const detail = kept
        ? KEPT_RESTRICTED
        : o.isOverridable
          ? DUPLICATE_DETAIL
          : `${DUPLICATE_DETAIL}; not overridable, only the platform may delete it`;
      out.push({ ...base, finding: "duplicate_client_control", observed: o, detail, prunable });
    } else if (o.setBy === "client" && l.legacy?.userDisabled === true && !l.source.userDisabled) {
      out.push({
        ...base,
        finding: "unexpected_client_control",
        observed: o,
        detail: LEGACY_STILL_TRUE,
        prunable: false,
      });
    } else if (o.setBy === "client") {
      const why = l.source.userDisabled
        ? DUPLICATE_DETAIL
        : `user_disabled is false but the platform holds ${l.describe(o)}`;
      const { kept, prunable } = prune(o);
      out.push({
        ...base,
        finding: "unexpected_client_control",
        observed: o,
        detail: kept ? KEPT_RESTRICTED : why,
        prunable,
      });
    } else if (o.setBy === "service") {
      behindSeen ||= behind;
      out.push({
        ...base,
        finding: behind ? "source_behind_platform" : "unexpected_service_control",
        observed: o,
        detail: behind
          ? BEHIND_DETAIL
          : `admin_disabled is false but the platform holds ${l.describe(o)}`,
        prunable: false,
      });
    } else {
      out.push({
        ...base,
        finding: "attribute_mismatch",
        observed: o,
        detail: `unknown set_by "${o.setByRaw}" on an unexpected SELL_ONLY`,
        prunable: false,
      });
    }
  }
  if (behind && !behindSeen) {
    out.push({
      ...base,
      finding: "source_behind_platform",
      observed: null,
      detail: BEHIND_DETAIL,
      prunable: false,
    });
  }
  return out;
}
