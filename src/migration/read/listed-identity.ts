/**
 * An identity as the run observed it on the platform: as a listing page (or a read by id) shows
 * it, as a held page packs it (`findings-stream.ts`), and what a read by id answers when it
 * cannot show it. Pure.
 */
import type { NewSnapshotControl } from "../../db/schema.ts";
import type { Identity, IdentityControl } from "../../platform/index.ts";
import type { PlatformLegacy } from "../classify/three-way.ts";
import { legacyCode, legacyOf, legacyOfCode } from "./three-way-listing.ts";

/** One listed identity: its id, its active controls as the snapshot stores them, and its legacy fields. */
export interface ListedIdentity {
  readonly id: string;
  readonly controls: readonly NewSnapshotControl[];
  /** The platform's legacy fields (`legacyOf`); absent: both false. */
  readonly legacy?: PlatformLegacy;
}

/**
 * One identity read by id (`GET /v2/identity/identities/{id}`): found, as a listing would have
 * shown it; not found (404); or not read (the read failed after the client's retries).
 */
export type ReadIdentity =
  | { readonly status: "found"; readonly identity: ListedIdentity }
  | { readonly status: "not_found" | "error"; readonly id: string; readonly error: string };

/** Reads identities by id; the findings stream hands it the candidates a filtered listing did not show. */
export type IdentityReader = (ids: readonly string[]) => Promise<readonly ReadIdentity[]>;

/** Most listed identities hold no control: they share one empty list. */
export const NO_CONTROLS: readonly NewSnapshotControl[] = Object.freeze([]);

/** A control as the snapshot stores it. */
export const controlRow = (
  runId: string,
  identityId: string,
  c: IdentityControl,
): NewSnapshotControl => ({
  run_id: runId,
  identity_id: identityId,
  control_id: c.id,
  type: c.type,
  set_by: c.setBy,
  set_by_raw: c.setByRaw,
  is_overridable: c.isOverridable,
  reason_code: c.reasonCode,
  reason: c.reason,
  created_at: c.createdAt,
  deleted_at: c.deletedAt,
});

/**
 * An identity as the platform answered it (a listing page's item or a read by id): its active
 * controls (a control with `deleted_at` is not) and its legacy fields.
 *
 * @example
 *   const listed = listedIdentityOf(runId, await client.getIdentity(id));
 */
export function listedIdentityOf(runId: string, identity: Identity): ListedIdentity {
  const legacy = legacyOf(identity.userDisabled, identity.adminDisabled);
  if (identity.activeControls.length === 0) {
    return { id: identity.id, controls: NO_CONTROLS, legacy };
  }
  const controls: NewSnapshotControl[] = [];
  for (const c of identity.activeControls) {
    if (!c.deletedAt) controls.push(controlRow(runId, identity.id, c));
  }
  return { id: identity.id, controls, legacy };
}

/** A holder as a held page keeps it: its id, its legacy fields' code, then each control's fields. */
export type PackedHolder = [string, number, ...PackedControl[]];
type PackedControl = [
  string,
  string,
  NewSnapshotControl["set_by"],
  string,
  boolean,
  string | null,
  string | null,
  string | null,
  string | null,
];
const isoOrNull = (d: Date | string | null | undefined) =>
  d == null ? null : typeof d === "string" ? d : d.toISOString();

export function packHolder(i: ListedIdentity): PackedHolder {
  return [
    i.id,
    legacyCode(i.legacy),
    ...i.controls.map(
      (c): PackedControl => [
        c.control_id,
        c.type,
        c.set_by,
        c.set_by_raw,
        c.is_overridable,
        c.reason_code ?? null,
        c.reason ?? null,
        isoOrNull(c.created_at),
        isoOrNull(c.deleted_at),
      ],
    ),
  ];
}

export function unpackHolder(packed: PackedHolder, runId: string): ListedIdentity {
  const [id, code, ...controls] = packed;
  return {
    id,
    legacy: legacyOfCode(code),
    controls: controls.map((c) => ({
      run_id: runId,
      identity_id: id,
      control_id: c[0],
      type: c[1],
      set_by: c[2],
      set_by_raw: c[3],
      is_overridable: c[4],
      reason_code: c[5],
      reason: c[6],
      created_at: c[7],
      deleted_at: c[8],
    })),
  };
}
