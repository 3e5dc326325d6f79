/** Public types of the transfer domain: internal transfers and balances. */
import type { Metadata } from "../input/seed-input.ts";

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

/** The transfer domain's seeding API; each method has an admin route twin under /__sandbox. */
export interface TransferApi {
  setBalances(items: readonly BalanceSeed[]): Balance[];
  balancesOf(profileId: string): Balance[];
  /** Fee per asset charged on internal transfers (decimal strings); replaces the table. */
  setTransferFees(fees: Record<string, string>): void;
  transfers(filter?: { profileId?: string; groupId?: string }): TransferRecord[];
}
