/**
 * One seed row made a stored identity: its status and type (given, or derived from a hash of its
 * id), its timestamps checked, its legacy fields and metadata as given. Pure; used by the seeder.
 */
import { isJsonObject } from "../input/body-fields.ts";
import { MAX_IDENTITY_ID_LENGTH } from "../shared.ts";
import type { StoredIdentity } from "./identity-store.ts";
import {
  IDENTITY_STATUSES,
  IDENTITY_TYPES,
  type IdentityStatus,
  type IdentityType,
  type SeedIdentity,
} from "./types.ts";

/** A seed row: the public shape, or a pre-computed created_at in epoch ms (synthetic seeds). */
export type SeedRow = SeedIdentity | (Omit<SeedIdentity, "created_at"> & { createdAtMs: number });

function idHash(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Default summary_status: 88% APPROVED, 6% PENDING, 2% each ERROR, DENIED, DISABLED. */
function defaultStatus(h: number): IdentityStatus {
  const r = h % 100;
  if (r < 88) return "APPROVED";
  if (r < 94) return "PENDING";
  if (r < 96) return "ERROR";
  return r < 98 ? "DENIED" : "DISABLED";
}

/** Default type: 85% PERSON, 15% INSTITUTION. */
const defaultType = (h: number): IdentityType =>
  Math.floor(h / 100) % 100 < 85 ? "PERSON" : "INSTITUTION";

function enumField<T extends string>(
  row: Record<string, unknown>,
  field: string,
  values: readonly T[],
  index: number,
): T | undefined {
  const v = row[field];
  if (v === undefined) return undefined;
  if (typeof v !== "string" || !(values as readonly string[]).includes(v)) {
    throw new RangeError(
      `identities[${index}].${field} must be one of ${values.join(", ")}, got ${JSON.stringify(v)}`,
    );
  }
  return v as T;
}

function instant(row: Record<string, unknown>, field: string, index: number): number | undefined {
  const v = row[field];
  if (v === undefined) return undefined;
  const ms = typeof v === "string" ? Date.parse(v) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new RangeError(
      `identities[${index}].${field} must be an ISO 8601 date-time, got ${JSON.stringify(v)}`,
    );
  }
  return ms;
}

export function toNewIdentity(row: SeedRow, index: number, clock: () => number): StoredIdentity {
  if (!isJsonObject(row)) {
    throw new RangeError(`identities[${index}] must be an object`);
  }
  if (typeof row.id !== "string" || row.id === "" || row.id.length > MAX_IDENTITY_ID_LENGTH) {
    throw new RangeError(
      `identities[${index}].id must be a non-empty string of at most ${MAX_IDENTITY_ID_LENGTH} characters`,
    );
  }
  for (const flag of ["user_disabled", "admin_disabled"] as const) {
    if (typeof row[flag] !== "boolean") {
      throw new RangeError(`identities[${index}].${flag} must be a boolean, got ${row[flag]}`);
    }
  }
  // Generated ids are V8 rope strings (concatenated pieces); numeric conversion flattens them in
  // place, which cuts a million-identity store from ~560 MB of heap to ~180 MB. The value is unchanged.
  Number(row.id);
  const fields = row as Record<string, unknown>;
  const createdAtMs =
    "createdAtMs" in row ? row.createdAtMs : (instant(fields, "created_at", index) ?? clock());
  const updatedAtMs = instant(fields, "updated_at", index);
  if (updatedAtMs !== undefined && updatedAtMs < createdAtMs) {
    throw new RangeError(`identities[${index}].updated_at must not precede created_at`);
  }
  const status = enumField(fields, "summary_status", IDENTITY_STATUSES, index);
  const type = enumField(fields, "type", IDENTITY_TYPES, index);
  const h = status === undefined || type === undefined ? idHash(row.id) : 0;
  return {
    id: row.id,
    createdAtMs,
    user_disabled: row.user_disabled,
    admin_disabled: row.admin_disabled,
    summaryStatus: status ?? defaultStatus(h),
    identityType: type ?? defaultType(h),
    updatedAtMs: updatedAtMs === createdAtMs ? undefined : updatedAtMs,
    controls: undefined,
    createdAtIso: undefined,
  };
}
