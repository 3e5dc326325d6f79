/**
 * The platform's legacy fields as a listing carries them (issue 27): shared frozen values for the
 * nine combinations (most identities share "both false"), a one-digit code for held pages, and
 * the snapshot row that stores them.
 */
import type { StoredObservation } from "../../db/journal/finding-queries.ts";
import type { ObservedVia } from "../../db/observation-tables.ts";
import type { NewSnapshotIdentity } from "../../db/schema.ts";
import type { PlatformLegacy } from "../classify/three-way.ts";

const VALUES = [false, true, null] as const;
/** Index `3 * user + admin` over false, true, null. */
const COMBOS: readonly PlatformLegacy[] = VALUES.flatMap((u) =>
  VALUES.map((a) => Object.freeze({ userDisabled: u, adminDisabled: a })),
);
const codeOf = (v: boolean | null) => (v === false ? 0 : v === true ? 1 : 2);

/** Both fields false: what a listed identity without `legacy` holds. */
export const LEGACY_FALSE = COMBOS[0] as PlatformLegacy;

/** The shared value of the platform's two legacy fields as read (null: not said). */
export function legacyOf(
  userDisabled: boolean | null,
  adminDisabled: boolean | null,
): PlatformLegacy {
  return COMBOS[3 * codeOf(userDisabled) + codeOf(adminDisabled)] as PlatformLegacy;
}

/** A number 0..8 for a held page. */
export const legacyCode = (l: PlatformLegacy | undefined): number =>
  l ? 3 * codeOf(l.userDisabled) + codeOf(l.adminDisabled) : 0;

export const legacyOfCode = (code: number): PlatformLegacy => COMBOS[code] ?? LEGACY_FALSE;

/** The fields say something else than "both false" (a held page keeps the identity whole). */
export const legacySaid = (l: PlatformLegacy | undefined): boolean =>
  l !== undefined && l !== LEGACY_FALSE;

/** A legacy field is true: the identity's findings depend on it even without source or control. */
export const legacyTrue = (l: PlatformLegacy | undefined): boolean =>
  l !== undefined && (l.userDisabled === true || l.adminDisabled === true);

/** A stored observation whose platform legacy fields are true. */
export const platformMarks = (o: StoredObservation): boolean =>
  o.platform_user_disabled === true || o.platform_admin_disabled === true;

/**
 * The snapshot row of an identity a listing showed or a read by id found (`via`, recorded as it
 * is observed), its legacy fields included.
 */
export function snapshotIdentity(
  runId: string,
  i: { readonly id: string; readonly legacy?: PlatformLegacy },
  via: ObservedVia,
): NewSnapshotIdentity {
  const l = i.legacy ?? LEGACY_FALSE;
  return {
    run_id: runId,
    identity_id: i.id,
    status: "found",
    error: null,
    platform_user_disabled: l.userDisabled,
    platform_admin_disabled: l.adminDisabled,
    observed_via: via,
  };
}
