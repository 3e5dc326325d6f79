/**
 * Public types of the exchange domain: quote executions and orders. Amounts are decimal strings,
 * as on the wire; markets and order statuses are the published enums, read from the schema.
 */

import type { Metadata } from "../input/seed-input.ts";
import { schemaEnum } from "../shared.ts";

/** The published Market enum, read from the project's copy of the schema. */
export const MARKETS: readonly string[] = schemaEnum("Market");
export type Market = string;

export const SIDES = ["BUY", "SELL"] as const;
export const EXECUTION_STATUSES = ["CREATED", "SETTLED"] as const;
export const ORDER_TYPES = [
  "MARKET",
  "LIMIT",
  "POST_ONLY_LIMIT",
  "STOP_MARKET",
  "STOP_LIMIT",
] as const;
export type OrderType = (typeof ORDER_TYPES)[number];
export const TIME_IN_FORCE = ["IOC", "GTC", "GTT", "FOK"] as const;
export type TimeInForce = (typeof TIME_IN_FORCE)[number];
/** The published OrderStatus enum (EXPIRED included), read from the schema. */
export const ORDER_STATUSES: readonly string[] = schemaEnum("OrderStatus");
export type OrderStatus = string;

export interface QuoteExecution {
  id: string;
  profile_id: string;
  quote_id: string;
  status: (typeof EXECUTION_STATUSES)[number];
  market: Market;
  side: (typeof SIDES)[number];
  price: string;
  base_amount: string;
  base_asset: string;
  quote_amount: string;
  quote_asset: string;
  created_at: string;
  /** Omitted while the execution is CREATED. */
  settled_at?: string;
  metadata: Metadata;
}

/** A quote execution to seed; amounts are decimal strings, created_at RFC 3339. */
export interface QuoteExecutionSeed {
  profile_id: string;
  market: string;
  side: string;
  price: string;
  base_amount: string;
  quote_amount?: string;
  id?: string;
  quote_id?: string;
  status?: string;
  created_at?: string;
  settled_at?: string;
  metadata?: Metadata;
}

/** Deterministic synthetic executions for one profile (pagination and filter tests). */
export interface SyntheticQuoteExecutions {
  profile_id: string;
  count: number;
  seed?: number;
}

export interface Order {
  id: string;
  profile_id: string;
  ref_id?: string;
  status: OrderStatus;
  side: (typeof SIDES)[number];
  market: Market;
  type: OrderType;
  price: string;
  base_amount: string;
  quote_amount: string;
  stop_price?: string;
  metadata: Metadata;
  created_at: string;
  modified_at: string;
  amount_filled: string;
  volume_weighted_average_price: string;
  time_in_force: TimeInForce;
  expiration_date?: string;
  identity_id?: string;
  identity_account_id?: string;
  recipient_profile_id?: string;
  is_triggered: boolean;
}

/**
 * An order to seed. created_at is the placement time the acceptance rules use; status is the
 * lifecycle state of an accepted order (SUBMITTED by default), overridden by REJECTED when a rule
 * is broken; modified_at of a closed order (FILLED, CANCELLED, REJECTED) is when it closed.
 */
export interface OrderSeed {
  profile_id: string;
  side: string;
  market: string;
  type: string;
  id?: string;
  ref_id?: string;
  status?: string;
  price?: string;
  base_amount?: string;
  quote_amount?: string;
  stop_price?: string;
  time_in_force?: string;
  expiration_date?: string;
  identity_id?: string;
  identity_account_id?: string;
  recipient_profile_id?: string;
  metadata?: Metadata;
  created_at?: string;
  modified_at?: string;
  amount_filled?: string;
  volume_weighted_average_price?: string;
  is_triggered?: boolean;
}

export interface OrderSeedResult {
  order: Order;
  /** Why the acceptance rules rejected it; absent when accepted. Never on the public order. */
  rejection_reason?: string;
}

/** The exchange's seeding API; each method has an admin route twin under /__sandbox. */
export interface ExchangeApi {
  seedQuoteExecutions(
    input: readonly QuoteExecutionSeed[] | SyntheticQuoteExecutions,
  ): QuoteExecution[];
  seedOrders(items: readonly OrderSeed[]): OrderSeedResult[];
}
