/** Public types of the deposit-address domain; networks are the published enum, read from the schema. */

import type { Metadata } from "../input/seed-input.ts";
import { schemaEnum } from "../shared.ts";

/** The published CryptoNetwork enum, read from the schema. */
export const CRYPTO_NETWORKS: readonly string[] = schemaEnum("CryptoNetwork");
export type CryptoNetwork = string;

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

/** The deposit-address seeding API; it has an admin route twin under /__sandbox. */
export interface DepositAddressApi {
  seedDepositAddresses(
    input: readonly DepositAddressSeed[] | SyntheticDepositAddresses,
  ): DepositAddress[];
}
