import { randomUUID } from "node:crypto";
import { compact, FieldReader } from "../input/body-fields.ts";
import { addressFor } from "../input/crypto-address.ts";
import { SeedConflictError } from "../input/seed-input.ts";
import { KeysetIndex } from "../paging/keyset-index.ts";
import { prng, uuidFrom } from "../shared.ts";
import { CRYPTO_NETWORKS, type DepositAddress, type SyntheticDepositAddresses } from "./types.ts";

export interface StoredAddress {
  readonly id: string;
  readonly createdAtMs: number;
  readonly record: DepositAddress;
}

const ADDRESS_FIELDS = [
  "profile_id",
  "crypto_network",
  "id",
  "identity_id",
  "account_id",
  "ref_id",
  "address",
  "conversion_target_asset",
  "metadata",
  "created_at",
] as const;

/** One deposit address from its seed. */
export function addressFromSeed(
  raw: unknown,
  now: () => number,
  customerId: string,
): StoredAddress {
  const f = new FieldReader(raw, "a deposit address", ADDRESS_FIELDS);
  const network = f.oneOf("crypto_network", CRYPTO_NETWORKS);
  const id = f.optional("id") ?? randomUUID();
  const createdAtMs = f.instant("created_at", now);
  const record: DepositAddress = compact({
    id,
    profile_id: f.required("profile_id"),
    customer_id: customerId,
    identity_id: f.optional("identity_id"),
    account_id: f.optional("account_id"),
    ref_id: f.optional("ref_id"),
    crypto_network: network,
    address: f.optional("address", 200) ?? addressFor(network, id),
    conversion_target_asset: f.oneOf(
      "conversion_target_asset",
      ["NO_CONVERSION", "USD"] as const,
      "NO_CONVERSION",
    ),
    compatible_crypto_networks: [network],
    metadata: f.metadata("metadata"),
    created_at: new Date(createdAtMs).toISOString(),
  });
  return { id, createdAtMs, record };
}

const SYNTHETIC_EPOCH_MS = Date.UTC(2024, 0, 1);

/**
 * `count` deterministic addresses over the given profiles and identities (5 and 20 generated ones
 * when absent), every network, three per second so that ties exercise the id tie-break. Each
 * identity has one account; every address has a ref_id.
 */
export function syntheticAddresses(
  s: SyntheticDepositAddresses,
  customerId: string,
): StoredAddress[] {
  if (!(Number.isInteger(s.count) && s.count >= 0 && s.count <= 1_000_000)) {
    throw new RangeError(`count must be an integer between 0 and 1000000, got ${s.count}`);
  }
  const seed = s.seed ?? 1;
  const rand = prng(seed ^ 0x7f4a7c15);
  const ids = (given: unknown, n: number, name: string): string[] => {
    if (given === undefined) return Array.from({ length: n }, () => uuidFrom(rand));
    if (
      !Array.isArray(given) ||
      given.length === 0 ||
      !given.every((v) => typeof v === "string" && v)
    ) {
      throw new RangeError(`${name} must be a non-empty array of non-empty strings`);
    }
    return given as string[];
  };
  const profiles = ids(s.profile_ids, 5, "profile_ids");
  const identities = ids(s.identity_ids, 20, "identity_ids");
  const accounts = identities.map(() => uuidFrom(rand));
  const out: StoredAddress[] = [];
  for (let i = 0; i < s.count; i++) {
    const who = Math.floor(rand() * identities.length);
    const createdAtMs = SYNTHETIC_EPOCH_MS + Math.floor(i / 3) * 1000;
    out.push(
      addressFromSeed(
        {
          id: uuidFrom(rand),
          profile_id: profiles[Math.floor(rand() * profiles.length)],
          crypto_network: CRYPTO_NETWORKS[Math.floor(rand() * CRYPTO_NETWORKS.length)],
          identity_id: identities[who],
          account_id: accounts[who],
          ref_id: `addr-${seed}-${i}`,
          created_at: new Date(createdAtMs).toISOString(),
        },
        () => createdAtMs,
        customerId,
      ),
    );
  }
  return out;
}

/**
 * Deposit addresses in keyset order, with their ids and ref_ids unique (a ref_id is the
 * platform's replay protection, so a second address with one is a conflict).
 */
export class DepositAddressStore {
  readonly records = new KeysetIndex<StoredAddress>();
  private ids = new Set<string>();
  private refIds = new Set<string>();

  get size(): number {
    return this.records.size;
  }

  add(batch: readonly StoredAddress[]): void {
    const ids = new Set<string>();
    const refs = new Set<string>();
    for (const a of batch) {
      if (this.ids.has(a.id) || ids.has(a.id)) {
        throw new SeedConflictError(`a deposit address with id ${a.id} already exists`);
      }
      ids.add(a.id);
      const ref = a.record.ref_id;
      if (ref !== undefined) {
        if (this.refIds.has(ref) || refs.has(ref)) {
          throw new SeedConflictError(
            `a deposit address with ref_id ${JSON.stringify(ref)} already exists`,
          );
        }
        refs.add(ref);
      }
    }
    for (const a of batch) {
      this.records.insert(a);
      this.ids.add(a.id);
      if (a.record.ref_id !== undefined) this.refIds.add(a.record.ref_id);
    }
  }

  reset(): void {
    this.records.clear();
    this.ids = new Set();
    this.refIds = new Set();
  }
}
