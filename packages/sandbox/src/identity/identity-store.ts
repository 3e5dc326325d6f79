import { randomUUID } from "node:crypto";
import { KeysetIndex } from "../paging/keyset-index.ts";
import { ActiveControlIndex } from "./active-control-index.ts";
import type { ControlRecord, IdentityStatus, IdentityType, Integrity } from "./types.ts";
import { type IdentityChange, movesUpdatedAt, touch, type UpdatedAtPolicy } from "./updated-at.ts";

/** An identity as the store keeps it; `created_at` is rendered on demand to save memory. */
export interface StoredIdentity {
  readonly id: string;
  readonly createdAtMs: number;
  /** The platform's legacy fields; legacy drift (`legacy-drift.ts`) may change them. */
  user_disabled: boolean;
  admin_disabled: boolean;
  readonly summaryStatus: IdentityStatus;
  readonly identityType: IdentityType;
  /** When the identity last changed as its updated_at policy counts; undefined: its created_at. */
  updatedAtMs: number | undefined;
  /** Append-only, deleted controls included; undefined until the first control (most have none). */
  controls: ControlRecord[] | undefined;
  /** created_at rendered once, on the first answer that needs it (see {@link createdAtOf}). */
  createdAtIso?: string | undefined;
}

/**
 * The identity's created_at as an ISO string, cached on first use: pages repeat the same identities
 * and formatting dates was a visible share of a page's cost, while caching all of them up front
 * would cost ~50 MB per million identities that may never be listed.
 */
export function createdAtOf(identity: StoredIdentity): string {
  identity.createdAtIso ??= new Date(identity.createdAtMs).toISOString();
  return identity.createdAtIso;
}

/** The identity's updated_at: its last change the policy counts (`updated-at.ts`), else created_at. */
export function updatedAtOf(identity: StoredIdentity): string {
  const ms = identity.updatedAtMs;
  return ms === undefined ? createdAtOf(identity) : new Date(ms).toISOString();
}

/** updated_at in epoch ms. */
export const updatedAtMsOf = (identity: StoredIdentity): number =>
  identity.updatedAtMs ?? identity.createdAtMs;

const NO_CONTROLS: readonly ControlRecord[] = Object.freeze([]);

export interface NewControl {
  type: string;
  set_by: string;
  is_overridable: boolean;
  reason_code: string;
  reason: string;
}

export type DeleteOutcome =
  | { kind: "deleted"; control: ControlRecord }
  | { kind: "not_found" }
  | { kind: "already_deleted"; control: ControlRecord }
  | { kind: "not_overridable"; control: ControlRecord };

export const isClientSetBy = (s: string) => s === "CLIENT" || s === "SET_BY_CLIENT";
export const isServiceSetBy = (s: string) => s === "SERVICE" || s === "SET_BY_SERVICE";

/**
 * The sandbox's in-memory platform state, sized for a million identities: a keyset index of every
 * identity by (created_at, id), the identities holding an active control per type and per reason
 * code (for filtered listings), a Map by id, a Map from control id to its identity, and a small
 * append-only control array per identity. Integrity counters are kept up to date on every write so
 * that stats never scan the whole store.
 *
 * @example
 *   const store = new SandboxStore();
 *   store.addIdentities([{ id: "a", createdAtMs: 0, user_disabled: true, admin_disabled: false,
 *     summaryStatus: "APPROVED", identityType: "PERSON", updatedAtMs: undefined, controls: undefined }]);
 *   store.insertControl(store.get("a")!, { type: "SELL_ONLY", set_by: "SET_BY_CLIENT", is_overridable: true, reason_code: "OTHER", reason: "" });
 */
export class SandboxStore {
  /** Read on every change, so a new policy applies from the next change on. */
  private readonly policy: () => UpdatedAtPolicy;
  constructor(policy: () => UpdatedAtPolicy = () => "all") {
    this.policy = policy;
  }

  readonly identities = new KeysetIndex<StoredIdentity>();
  readonly active = new ActiveControlIndex<StoredIdentity>();
  private byId = new Map<string, StoredIdentity>();
  private controlOwner = new Map<string, StoredIdentity>();
  private activeCount = 0;
  private readonly integrity: Integrity = {
    identitiesWithDuplicateClientSellOnly: 0,
    duplicateClientSellOnlyControls: 0,
    activeClientSellOnly: 0,
    activeServiceSellOnly: 0,
  };

  get identityCount(): number {
    return this.identities.size;
  }

  get controlCounts(): { total: number; active: number } {
    return { total: this.controlOwner.size, active: this.activeCount };
  }

  integritySnapshot(): Integrity {
    return { ...this.integrity };
  }

  get(id: string): StoredIdentity | undefined {
    return this.byId.get(id);
  }

  /**
   * Adds identities in one batch (records are adopted as they are: a million-row seed allocates
   * one object per identity); ids already present, or repeated in the batch, are skipped.
   */
  addIdentities(rows: Iterable<StoredIdentity>): { added: StoredIdentity[]; skipped: number } {
    const added: StoredIdentity[] = [];
    let skipped = 0;
    for (const identity of rows) {
      if (this.byId.has(identity.id)) {
        skipped++;
        continue;
      }
      this.byId.set(identity.id, identity);
      added.push(identity);
    }
    this.identities.addMany(added);
    return { added, skipped };
  }

  /** Active controls, for answers only: the result may be a shared frozen empty array. */
  activeControls(identity: StoredIdentity): readonly ControlRecord[] {
    const all = identity.controls;
    if (!all) return NO_CONTROLS;
    const out: ControlRecord[] = [];
    for (const c of all) if (c.deleted_at === undefined) out.push(c);
    return out;
  }

  /**
   * A page of one identity's controls. The cursor is the index of the last returned control in the
   * append-only array, so controls created during a walk appear at its end and none repeat.
   */
  pageControls(
    identity: StoredIdentity,
    includeDeleted: boolean,
    afterIndex: number,
    limit: number,
  ): { items: ControlRecord[]; lastIndex: number; more: boolean } {
    const all = identity.controls ?? [];
    const items: ControlRecord[] = [];
    let i = afterIndex + 1;
    let lastIndex = afterIndex;
    for (; i < all.length && items.length < limit; i++) {
      const c = all[i]!;
      if (includeDeleted || c.deleted_at === undefined) {
        items.push(c);
        lastIndex = i;
      }
    }
    let more = false;
    for (let j = lastIndex + 1; j < all.length; j++) {
      if (includeDeleted || all[j]!.deleted_at === undefined) {
        more = true;
        break;
      }
    }
    return { items, lastIndex, more };
  }

  hasActiveOfType(identity: StoredIdentity, type: string): boolean {
    return identity.controls?.some((c) => c.type === type && c.deleted_at === undefined) ?? false;
  }

  /**
   * Appends a control. `touch` (every write but a seed, which plays the past) moves the
   * identity's updated_at to now if the policy counts control changes.
   */
  insertControl(
    identity: StoredIdentity,
    c: NewControl,
    opts: { deleted?: boolean; touch?: boolean } = {},
  ): ControlRecord {
    const nowMs = Date.now();
    const now = new Date(nowMs).toISOString();
    const record: ControlRecord = {
      id: randomUUID(),
      type: c.type,
      set_by: c.set_by,
      is_overridable: c.is_overridable,
      reason_code: c.reason_code,
      reason: c.reason,
      created_at: now,
    };
    if (opts.deleted) record.deleted_at = now;
    if (!identity.controls) identity.controls = [];
    identity.controls.push(record);
    this.controlOwner.set(record.id, identity);
    if (opts.touch) this.changed(identity, "control", nowMs);
    if (!opts.deleted) {
      this.activeCount++;
      this.track(identity, record, +1);
      this.active.activated(identity, record);
    }
    return record;
  }

  findControl(controlId: string): { identity: StoredIdentity; control: ControlRecord } | undefined {
    const identity = this.controlOwner.get(controlId);
    const control = identity?.controls?.find((c) => c.id === controlId);
    return identity && control ? { identity, control } : undefined;
  }

  /** Soft-deletes a control; refuses non-overridable ones unless `force` (the admin surface). */
  deleteControl(controlId: string, force = false): DeleteOutcome {
    const found = this.findControl(controlId);
    if (!found) return { kind: "not_found" };
    const { identity, control } = found;
    if (control.deleted_at !== undefined) return { kind: "already_deleted", control };
    if (!control.is_overridable && !force) return { kind: "not_overridable", control };
    const nowMs = Date.now();
    control.deleted_at = new Date(nowMs).toISOString();
    this.changed(identity, "control", nowMs);
    this.activeCount--;
    this.track(identity, control, -1);
    this.active.deactivated(identity, control);
    return { kind: "deleted", control };
  }

  /** Sets the legacy fields given; one that changes moves updated_at if the policy says so. */
  setLegacyFields(
    identity: StoredIdentity,
    fields: { user_disabled?: boolean; admin_disabled?: boolean },
  ): void {
    let changed = false;
    for (const key of ["user_disabled", "admin_disabled"] as const) {
      const v = fields[key];
      if (v === undefined || v === identity[key]) continue;
      identity[key] = v;
      changed = true;
    }
    if (changed) this.changed(identity, "identity-field", Date.now());
  }

  /**
   * Removes an identity as the platform would when it closes it for good: its active controls are
   * deleted (non-overridable ones included), then it is gone from every listing and look-up.
   */
  removeIdentity(id: string): boolean {
    const identity = this.byId.get(id);
    if (!identity) return false;
    for (const c of identity.controls ?? []) {
      if (c.deleted_at === undefined) this.deleteControl(c.id, true);
      this.controlOwner.delete(c.id);
    }
    this.byId.delete(id);
    this.identities.remove(identity);
    return true;
  }

  reset(): void {
    this.identities.clear();
    this.active.reset();
    this.byId = new Map();
    this.controlOwner = new Map();
    this.activeCount = 0;
    this.integrity.identitiesWithDuplicateClientSellOnly = 0;
    this.integrity.duplicateClientSellOnlyControls = 0;
    this.integrity.activeClientSellOnly = 0;
    this.integrity.activeServiceSellOnly = 0;
  }

  private changed(identity: StoredIdentity, change: IdentityChange, nowMs: number): void {
    if (movesUpdatedAt(this.policy(), change)) touch(identity, nowMs);
  }

  /** Updates the integrity counters after `control` became active (+1) or was deleted (-1). */
  private track(identity: StoredIdentity, control: ControlRecord, delta: 1 | -1): void {
    if (control.type !== "SELL_ONLY") return;
    if (isServiceSetBy(control.set_by)) {
      this.integrity.activeServiceSellOnly += delta;
      return;
    }
    if (!isClientSetBy(control.set_by)) return;
    this.integrity.activeClientSellOnly += delta;
    let after = 0;
    for (const c of identity.controls ?? []) {
      if (c.type === "SELL_ONLY" && c.deleted_at === undefined && isClientSetBy(c.set_by)) after++;
    }
    const before = after - delta;
    const surplus = (n: number) => Math.max(0, n - 1);
    this.integrity.duplicateClientSellOnlyControls += surplus(after) - surplus(before);
    this.integrity.identitiesWithDuplicateClientSellOnly += Number(after > 1) - Number(before > 1);
  }
}
