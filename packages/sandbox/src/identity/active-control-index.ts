import { type Keyed, KeysetIndex } from "../paging/keyset-index.ts";

/** What the index needs of an identity: its key and its (append-only) controls. */
export interface IndexedIdentity extends Keyed {
  readonly controls:
    | readonly { type: string; reason_code: string; deleted_at?: string | undefined }[]
    | undefined;
}

/** What the index needs of a control. */
export interface IndexedControl {
  readonly type: string;
  readonly reason_code: string;
}

/**
 * The identities holding at least one active control of each type and of each reason code, each
 * set in keyset order. `GET /v2/identity/identities?control_types=SELL_ONLY` walks the SELL_ONLY
 * set instead of scanning every identity: with 1,000,000 identities of which 6% hold a SELL_ONLY,
 * a page costs its 1000 records, not a million.
 *
 * Kept up to date by the store on every control created or deleted; a seed batches its additions
 * and merges them once ({@link ActiveControlIndex.batch}).
 *
 * @example
 *   const index = new ActiveControlIndex<StoredIdentity>();
 *   index.activated(identity, control); // after the control was appended as active
 *   index.byType("SELL_ONLY")?.size;
 */
export class ActiveControlIndex<T extends IndexedIdentity> {
  private types = new Map<string, KeysetIndex<T>>();
  private reasons = new Map<string, KeysetIndex<T>>();
  private pending: Map<KeysetIndex<T>, T[]> | undefined;

  byType(type: string): KeysetIndex<T> | undefined {
    return this.types.get(type);
  }

  byReason(reasonCode: string): KeysetIndex<T> | undefined {
    return this.reasons.get(reasonCode);
  }

  /** Call after `control` was appended to `identity.controls` as active. */
  activated(identity: T, control: IndexedControl): void {
    if (countActive(identity, "type", control.type) === 1) {
      this.add(this.types, control.type, identity);
    }
    if (countActive(identity, "reason_code", control.reason_code) === 1) {
      this.add(this.reasons, control.reason_code, identity);
    }
  }

  /** Call after `control` of `identity` was marked deleted. */
  deactivated(identity: T, control: IndexedControl): void {
    if (countActive(identity, "type", control.type) === 0) {
      this.types.get(control.type)?.remove(identity);
    }
    if (countActive(identity, "reason_code", control.reason_code) === 0) {
      this.reasons.get(control.reason_code)?.remove(identity);
    }
  }

  /**
   * Runs `fn` (a seed: only activations) with additions collected per set, then merges each set's
   * additions in one sorted pass. Inserting a million seeded controls one by one would splice.
   */
  batch<R>(fn: () => R): R {
    if (this.pending) return fn();
    this.pending = new Map();
    try {
      return fn();
    } finally {
      const pending = this.pending;
      this.pending = undefined;
      for (const [index, items] of pending) index.addMany(items);
    }
  }

  reset(): void {
    this.types = new Map();
    this.reasons = new Map();
  }

  private add(sets: Map<string, KeysetIndex<T>>, key: string, identity: T): void {
    let index = sets.get(key);
    if (!index) {
      index = new KeysetIndex<T>();
      sets.set(key, index);
    }
    if (!this.pending) {
      index.insert(identity);
      return;
    }
    let list = this.pending.get(index);
    if (!list) {
      list = [];
      this.pending.set(index, list);
    }
    list.push(identity);
  }
}

function countActive(identity: IndexedIdentity, field: "type" | "reason_code", value: string) {
  let n = 0;
  for (const c of identity.controls ?? []) {
    if (c[field] === value && c.deleted_at === undefined) n++;
  }
  return n;
}
