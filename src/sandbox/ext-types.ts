import { schemaEnum } from "../contract/published-schema.ts";

/**
 * Public types of the rest of the platform interface the sandbox emulates: quote executions,
 * orders, internal transfers with balances, deposit addresses and orchestration rules. Amounts are
 * decimal strings everywhere, as on the wire.
 */

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
/** The published CryptoNetwork enum, read from the schema. */
export const CRYPTO_NETWORKS: readonly string[] = schemaEnum("CryptoNetwork");
export type CryptoNetwork = string;

export type Metadata = Record<string, string>;

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

export interface TransferRecord {
  id: string;
  customer_id: string;
  profile_id: string;
  ref_id?: string;
  amount: string;
  fee: string;
  /** The balance change: amount + fee for the debit, amount - fee for the credit. */
  total: string;
  asset: string;
  balance_asset: string;
  direction: "DEBIT" | "CREDIT";
  type: "INTERNAL_TRANSFER_DEBIT" | "INTERNAL_TRANSFER_CREDIT";
  status: "COMPLETED";
  group_id: string;
  metadata: Metadata;
  identity_id?: string;
  account_id?: string;
  created_at: string;
  updated_at: string;
}

export interface BalanceSeed {
  profile_id: string;
  asset: string;
  /** Decimal string >= 0; replaces the profile's balance of that asset. */
  amount: string;
}

export interface Balance {
  profile_id: string;
  asset: string;
  available: string;
}

export interface DepositAddress {
  id: string;
  profile_id: string;
  customer_id: string;
  identity_id?: string;
  account_id?: string;
  ref_id?: string;
  crypto_network: CryptoNetwork;
  address: string;
  conversion_target_asset: "NO_CONVERSION" | "USD";
  compatible_crypto_networks: CryptoNetwork[];
  metadata: Metadata;
  created_at: string;
}

export interface DepositAddressSeed {
  profile_id: string;
  crypto_network: string;
  id?: string;
  identity_id?: string;
  account_id?: string;
  ref_id?: string;
  address?: string;
  conversion_target_asset?: string;
  metadata?: Metadata;
  created_at?: string;
}

/** Deterministic synthetic addresses spread over the given (or generated) profiles and identities. */
export interface SyntheticDepositAddresses {
  count: number;
  seed?: number;
  profile_ids?: string[];
  identity_ids?: string[];
}

export interface RuleEndpoint {
  crypto?: { address_id?: string; address?: string; network: string };
  fiat?: {
    deposit_instructions_id?: string;
    network?: string;
    account_type?: string;
    memo_id?: string;
    fiat_account_id?: string;
    memo?: string;
  };
  profile?: { profile_id: string };
}

export interface OrchestrationRule {
  id: string;
  ref_id: string;
  nickname: string;
  profile_id: string;
  identity_id?: string;
  account_id?: string;
  /** ACTIVE until deleted; the published enum also has PENDING and REJECTED. */
  status: "ACTIVE" | "DELETED";
  source_asset: string;
  destination_asset: string;
  source: RuleEndpoint;
  destination: RuleEndpoint;
  created_at: string;
}

export interface OrchestrationRuleSeed {
  ref_id: string;
  profile_id: string;
  source_asset: string;
  destination_asset: string;
  source: RuleEndpoint;
  destination: RuleEndpoint;
  id?: string;
  nickname?: string;
  identity_id?: string;
  account_id?: string;
  created_at?: string;
}

export interface ExtCounts {
  profiles: number;
  quoteExecutions: number;
  orders: number;
  transfers: number;
  depositAddresses: number;
  orchestrationRules: { active: number; deleted: number };
}

/**
 * The programmatic seeding surface of the extended interface; each method has an admin-route twin
 * under /__sandbox. Invalid input throws a RangeError (400 on the admin surface), a clash with
 * stored data (duplicate id, held ref_id) a {@link SeedConflictError} (409). A call stores all of
 * its items or none.
 */
export interface SandboxExtApi {
  seedQuoteExecutions(
    input: readonly QuoteExecutionSeed[] | SyntheticQuoteExecutions,
  ): QuoteExecution[];
  seedOrders(items: readonly OrderSeed[]): OrderSeedResult[];
  setBalances(items: readonly BalanceSeed[]): Balance[];
  balancesOf(profileId: string): Balance[];
  /** Fee per asset charged on internal transfers (decimal strings); replaces the table. */
  setTransferFees(fees: Record<string, string>): void;
  transfers(filter?: { profileId?: string; groupId?: string }): TransferRecord[];
  seedDepositAddresses(
    input: readonly DepositAddressSeed[] | SyntheticDepositAddresses,
  ): DepositAddress[];
  seedOrchestrationRules(items: readonly OrchestrationRuleSeed[]): OrchestrationRule[];
  orchestrationRules(): OrchestrationRule[];
}

/** A seed that clashes with stored data: a duplicate id or a ref_id still held. */
export class SeedConflictError extends Error {}
