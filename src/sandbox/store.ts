import { randomUUID } from "node:crypto";
import type { ControlRecord, Integrity } from "./types.ts";

/** An identity as the store keeps it; `created_at` is rendered on demand to save memory. */
export interface StoredIdentity {
  readonly id: string;
  readonly createdAtMs: number;
  readonly user_disabled: boolean;
  readonly admin_disabled: boolean;
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

const NO_CONTROLS: readonly ControlRecord[] = Object.freeze([]);

export interface NewIdentity {
  id: string;
  createdAtMs: number;
  user_disabled: boolean;
  admin_disabled: boolean;
}

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

function compareKey(aMs: number, aId: string, b: StoredIdentity): number {
  if (aMs !== b.createdAtMs) return aMs < b.createdAtMs ? -1 : 1;
  return aId < b.id ? -1 : aId > b.id ? 1 : 0;
}

const compareIdentities = (a: StoredIdentity, b: StoredIdentity) =>
  compareKey(a.createdAtMs, a.id, b);

/**
 * The sandbox's in-memory platform state, sized for a million identities: one array sorted by
 * (created_at, id) for keyset pages, a Map by id, a Map from control id to its identity, and a small
 * append-only control array per identity. Integrity counters are kept up to date on every write so
 * that stats never scan the whole store.
 *
 * @example
 *   const store = new SandboxStore();
 *   store.addIdentities([{ id: "a", createdAtMs: 0, user_disabled: true, admin_disabled: false }]);
 *   store.insertControl(store.get("a")!, { type: "SELL_ONLY", set_by: "CLIENT", is_overridable: true, reason_code: "OTHER", reason: "" });
 */
export class SandboxStore {
  private sorted: StoredIdentity[] = [];
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
    return this.sorted.length;
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
   * Adds identities in one batch; ids already present (or repeated in the batch) are skipped.
   * Sorting the batch and merging keeps a million-row seed O(n log n) instead of n splices.
   */
  addIdentities(rows: Iterable<NewIdentity>): { added: StoredIdentity[]; skipped: number } {
    const added: StoredIdentity[] = [];
    let skipped = 0;
    for (const r of rows) {
      if (this.byId.has(r.id)) {
        skipped++;
        continue;
      }
      // Adopted as is when already in stored shape (the seeder builds them so): a million-row seed
      // then allocates one object per identity, not two.
      const identity: StoredIdentity =
        "controls" in r
          ? (r as StoredIdentity)
          : {
              id: r.id,
              createdAtMs: r.createdAtMs,
              user_disabled: r.user_disabled,
              admin_disabled: r.admin_disabled,
              controls: undefined,
              createdAtIso: undefined,
            };
      this.byId.set(r.id, identity);
      added.push(identity);
    }
    if (added.length === 0) return { added, skipped };
    const batch = added.slice().sort(compareIdentities);
    const last = this.sorted[this.sorted.length - 1];
    const first = batch[0]!;
    if (!last || compareIdentities(last, first) < 0) {
      for (const i of batch) this.sorted.push(i);
    } else if (batch.length === 1) {
      this.sorted.splice(this.upperBound(first.createdAtMs, first.id), 0, first);
    } else {
      this.sorted = mergeSorted(this.sorted, batch);
    }
    return { added, skipped };
  }

  /**
   * One keyset page: identities strictly after (ASC) or before (DESC) `after`, in order. Inserts
   * on either side of the key never shift what the next page returns, so walks neither lose nor
   * repeat items.
   */
  pageIdentities(
    order: "ASC" | "DESC",
    after: { t: number; id: string } | undefined,
    limit: number,
  ): { items: StoredIdentity[]; more: boolean } {
    const items: StoredIdentity[] = [];
    const n = this.sorted.length;
    if (order === "ASC") {
      let i = after ? this.upperBound(after.t, after.id) : 0;
      for (; i < n && items.length < limit; i++) items.push(this.sorted[i]!);
      return { items, more: i < n };
    }
    let i = after ? this.lowerBound(after.t, after.id) - 1 : n - 1;
    for (; i >= 0 && items.length < limit; i--) items.push(this.sorted[i]!);
    return { items, more: i >= 0 };
  }

  /** First index whose key is greater than (t, id). */
  private upperBound(t: number, id: string): number {
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKey(t, id, this.sorted[mid]!) >= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First index whose key is greater than or equal to (t, id). */
  private lowerBound(t: number, id: string): number {
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKey(t, id, this.sorted[mid]!) > 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
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

  insertControl(identity: StoredIdentity, c: NewControl, deleted = false): ControlRecord {
    const now = new Date().toISOString();
    const record: ControlRecord = {
      id: randomUUID(),
      type: c.type,
      set_by: c.set_by,
      is_overridable: c.is_overridable,
      reason_code: c.reason_code,
      reason: c.reason,
      created_at: now,
    };
    if (deleted) record.deleted_at = now;
    if (!identity.controls) identity.controls = [];
    identity.controls.push(record);
    this.controlOwner.set(record.id, identity);
    if (!deleted) {
      this.activeCount++;
      this.track(identity, record, +1);
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
    control.deleted_at = new Date().toISOString();
    this.activeCount--;
    this.track(identity, control, -1);
    return { kind: "deleted", control };
  }

  reset(): void {
    this.sorted = [];
    this.byId = new Map();
    this.controlOwner = new Map();
    this.activeCount = 0;
    this.integrity.identitiesWithDuplicateClientSellOnly = 0;
    this.integrity.duplicateClientSellOnlyControls = 0;
    this.integrity.activeClientSellOnly = 0;
    this.integrity.activeServiceSellOnly = 0;
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

function mergeSorted(a: StoredIdentity[], b: StoredIdentity[]): StoredIdentity[] {
  const out: StoredIdentity[] = new Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) {
    out[k++] = compareIdentities(a[i]!, b[j]!) <= 0 ? a[i++]! : b[j++]!;
  }
  while (i < a.length) out[k++] = a[i++]!;
  while (j < b.length) out[k++] = b[j++]!;
  return out;
}
