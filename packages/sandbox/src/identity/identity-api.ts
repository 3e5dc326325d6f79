import type { SandboxContext } from "../context.ts";
import { stripUndefined } from "../gateway/faults.ts";
import { seedStore } from "./identity-seed.ts";
import { isClientSetBy } from "./identity-store.ts";
import type { SeedRow } from "./seed-row.ts";
import type { AddControlInput, ControlRecord, IdentityApi } from "./types.ts";

function addControl(ctx: SandboxContext, identityId: string, c: AddControlInput): ControlRecord {
  const identity = ctx.identities.get(identityId);
  if (!identity) throw new RangeError(`identity ${identityId} not found`);
  if (typeof c?.type !== "string" || c.type === "") {
    throw new RangeError(
      "type is required (any string; SELL_ONLY, CLOSED, FROZEN, DORMANT are the platform's)",
    );
  }
  for (const k of ["set_by", "reason_code", "reason"] as const) {
    if (c[k] !== undefined && typeof c[k] !== "string")
      throw new RangeError(`${k} must be a string`);
  }
  for (const k of ["is_overridable", "deleted"] as const) {
    if (c[k] !== undefined && typeof c[k] !== "boolean")
      throw new RangeError(`${k} must be a boolean`);
  }
  const setBy = c.set_by ?? ctx.setBy.client;
  const record = ctx.identities.insertControl(
    identity,
    {
      type: c.type,
      set_by: setBy,
      is_overridable: c.is_overridable ?? isClientSetBy(setBy),
      reason_code: c.reason_code ?? (isClientSetBy(setBy) ? "OTHER" : "ADMINISTRATIVE"),
      reason: c.reason ?? "added through the sandbox admin surface",
    },
    { deleted: c.deleted ?? false, touch: true },
  );
  return { ...record };
}

/**
 * The identity domain's seeding API over a context: the programmatic handle and the admin routes
 * both call it. Invalid input throws a RangeError.
 *
 * @example
 *   identityApi(ctx).seedIdentities([{ id: "a", user_disabled: true, admin_disabled: false }]);
 */
export function identityApi(ctx: SandboxContext): IdentityApi {
  return {
    seedIdentities: (rows, opts = {}) =>
      seedStore(
        ctx.identities,
        rows as Iterable<SeedRow>,
        { ...ctx.seedDefaults, ...stripUndefined(opts) },
        ctx.nextCreatedAt,
      ),
    addControl: (identityId, c) => addControl(ctx, identityId, c),
    legacyFieldsOf(identityId) {
      const identity = ctx.identities.get(identityId);
      if (!identity) throw new RangeError(`identity ${identityId} not found`);
      return { user_disabled: identity.user_disabled, admin_disabled: identity.admin_disabled };
    },
    setLegacyFields(identityId, fields) {
      const identity = ctx.identities.get(identityId);
      if (!identity) throw new RangeError(`identity ${identityId} not found`);
      for (const key of ["user_disabled", "admin_disabled"] as const) {
        const v = fields[key];
        if (v !== undefined && typeof v !== "boolean") {
          throw new RangeError(`${key} must be a boolean`);
        }
      }
      ctx.identities.setLegacyFields(identity, fields);
      return { user_disabled: identity.user_disabled, admin_disabled: identity.admin_disabled };
    },
    controlsOf(identityId, opts = {}) {
      const identity = ctx.identities.get(identityId);
      if (!identity) throw new RangeError(`identity ${identityId} not found`);
      return (identity.controls ?? [])
        .filter((c) => opts.includeDeleted || c.deleted_at === undefined)
        .map((c) => ({ ...c }));
    },
    deleteControl(controlId) {
      const outcome = ctx.identities.deleteControl(controlId, true);
      if (outcome.kind === "not_found") throw new RangeError(`control ${controlId} not found`);
      if (outcome.kind === "already_deleted") {
        throw new RangeError(`control ${controlId} is already deleted`);
      }
      return { ...outcome.control };
    },
    removeIdentity(identityId) {
      if (!ctx.identities.removeIdentity(identityId)) {
        throw new RangeError(`identity ${identityId} not found`);
      }
    },
  };
}
