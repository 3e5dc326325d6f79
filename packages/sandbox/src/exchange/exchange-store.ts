import { SeedConflictError } from "../input/seed-input.ts";
import { KeysetIndex } from "../paging/keyset-index.ts";
import {
  CLOSED_ORDER_STATUSES,
  orderStateAt,
  type RefHolder,
  refIdRefusal,
} from "./order-rules.ts";
import type { Order, QuoteExecution } from "./types.ts";

export interface StoredExecution {
  readonly id: string;
  readonly createdAtMs: number;
  readonly record: QuoteExecution;
}

export interface StoredOrder {
  readonly record: Order;
  readonly placedAtMs: number;
  /** When the order closed (FILLED, CANCELLED, REJECTED): its modified_at; undefined while open. */
  readonly closedAtMs: number | undefined;
}

function holderOf(o: StoredOrder, nowMs: number): RefHolder {
  return { id: o.record.id, ...orderStateAt(o.record, o.closedAtMs, nowMs) };
}

/**
 * The order as it reads at `nowMs`: an open GTT order whose expiration_date has passed is EXPIRED,
 * modified at its expiration.
 */
export function orderAt(o: StoredOrder, nowMs: number): Order {
  const state = orderStateAt(o.record, o.closedAtMs, nowMs);
  if (state.status === o.record.status) return o.record;
  return {
    ...o.record,
    status: state.status,
    modified_at: new Date(state.closedAtMs ?? nowMs).toISOString(),
  };
}

export function closedAt(record: Order, modifiedAtMs: number): number | undefined {
  return CLOSED_ORDER_STATUSES.includes(record.status) ? modifiedAtMs : undefined;
}

/**
 * The exchange side of the sandbox: quote executions per profile (kept in keyset order) and
 * orders by id, with the account-wide ref_id index the reuse rule reads. Batches are checked in
 * full before anything is stored, so a refused seed leaves no partial state.
 *
 * @example
 *   const store = new ExchangeStore();
 *   store.addExecutions([stored]);
 *   store.executionsOf(stored.record.profile_id)?.size; // 1
 */
export class ExchangeStore {
  private executions = new Map<string, KeysetIndex<StoredExecution>>();
  private executionIds = new Set<string>();
  private orders = new Map<string, StoredOrder>();
  /** ref_id → the latest order that took it. */
  private ordersByRef = new Map<string, StoredOrder>();

  get executionCount(): number {
    return this.executionIds.size;
  }

  get orderCount(): number {
    return this.orders.size;
  }

  executionsOf(profileId: string): KeysetIndex<StoredExecution> | undefined {
    return this.executions.get(profileId);
  }

  addExecutions(batch: readonly StoredExecution[]): void {
    const seen = new Set<string>();
    for (const e of batch) {
      if (this.executionIds.has(e.id) || seen.has(e.id)) {
        throw new SeedConflictError(`a quote execution with id ${e.id} already exists`);
      }
      seen.add(e.id);
    }
    for (const e of batch) {
      let list = this.executions.get(e.record.profile_id);
      if (!list) {
        list = new KeysetIndex();
        this.executions.set(e.record.profile_id, list);
      }
      list.insert(e);
      this.executionIds.add(e.id);
    }
  }

  order(id: string): StoredOrder | undefined {
    return this.orders.get(id);
  }

  /**
   * Stores orders in batch order. An order whose ref_id is held (by a stored order or an earlier
   * one of the batch) is refused with the whole batch.
   */
  addOrders(batch: readonly StoredOrder[]): void {
    const ids = new Set<string>();
    const refs = new Map<string, StoredOrder>();
    for (const o of batch) {
      const { id, ref_id: refId } = o.record;
      if (this.orders.has(id) || ids.has(id)) {
        throw new SeedConflictError(`an order with id ${id} already exists`);
      }
      ids.add(id);
      if (refId === undefined) continue;
      const holder = refs.get(refId) ?? this.ordersByRef.get(refId);
      const refusal = holder && refIdRefusal(refId, holderOf(holder, o.placedAtMs), o.placedAtMs);
      if (refusal) throw new SeedConflictError(refusal);
      refs.set(refId, o);
    }
    for (const o of batch) {
      this.orders.set(o.record.id, o);
      if (o.record.ref_id !== undefined) this.ordersByRef.set(o.record.ref_id, o);
    }
  }

  reset(): void {
    this.executions = new Map();
    this.executionIds = new Set();
    this.orders = new Map();
    this.ordersByRef = new Map();
  }
}
