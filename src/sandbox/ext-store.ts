import { randomUUID } from "node:crypto";
import {
  addressFromSeed,
  DepositAddressStore,
  syntheticAddresses,
} from "./deposit-address/deposit-address-store.ts";
import { executionFromSeed, orderFromSeed, syntheticExecutions } from "./exchange/exchange-seed.ts";
import { ExchangeStore } from "./exchange/exchange-store.ts";
import type { Balance, ExtCounts, OrderSeedResult, SandboxExtApi } from "./ext-types.ts";
import {
  assetField,
  atItem,
  isJsonObject,
  objectOf,
  onlyFields,
  requiredString,
} from "./input/body-fields.ts";
import { formatDecimal, parseDecimal } from "./input/decimal.ts";
import { OrchestrationStore, ruleFromSeed } from "./orchestration/orchestration-store.ts";
import { TransferStore } from "./transfer/transfer-store.ts";

function itemsOf(input: unknown, what: string): readonly unknown[] {
  if (!Array.isArray(input)) throw new RangeError(`${what} must be an array`);
  return input;
}

function isSynthetic(input: unknown): boolean {
  return isJsonObject(input) && "count" in input;
}

function synthetic<T>(input: unknown, known: readonly string[]): T {
  const b = objectOf(input, "a synthetic seed");
  onlyFields(b, known, "a synthetic seed");
  if (b.seed !== undefined && !Number.isInteger(b.seed)) {
    throw new RangeError(`seed must be an integer, got ${JSON.stringify(b.seed)}`);
  }
  return b as T;
}

/**
 * The state of the rest of the interface: exchange (quote executions, orders), transfers
 * (balances, fees, ledger), deposit addresses and orchestration rules, plus the set of profiles
 * they mention. A profile exists once any seed names it; the profile-scoped endpoints answer 404
 * for any other.
 *
 * @example
 *   const ext = new ExtStore(() => Date.now());
 *   ext.api().setBalances([{ profile_id: "p1", asset: "BTC", amount: "1.5" }]);
 *   ext.hasProfile("p1"); // true
 */
export class ExtStore {
  /** The customer every record belongs to: the sandbox emulates a single platform account. */
  readonly customerId = randomUUID();
  readonly exchange = new ExchangeStore();
  readonly transfers = new TransferStore(this.customerId);
  readonly addresses = new DepositAddressStore();
  readonly rules = new OrchestrationStore();
  private profiles = new Set<string>();

  constructor(private readonly clock: () => number) {}

  hasProfile(id: string): boolean {
    return this.profiles.has(id);
  }

  counts(): ExtCounts {
    return {
      profiles: this.profiles.size,
      quoteExecutions: this.exchange.executionCount,
      orders: this.exchange.orderCount,
      transfers: this.transfers.transferCount,
      depositAddresses: this.addresses.size,
      orchestrationRules: this.rules.counts,
    };
  }

  reset(): void {
    this.exchange.reset();
    this.transfers.reset();
    this.addresses.reset();
    this.rules.reset();
    this.profiles = new Set();
  }

  /** The programmatic seeding surface; see {@link SandboxExtApi}. */
  api(): SandboxExtApi {
    const now = this.clock;
    const touch = (ids: Iterable<string>) => {
      for (const id of ids) this.profiles.add(id);
    };
    return {
      seedQuoteExecutions: (input) => {
        const batch = isSynthetic(input)
          ? syntheticExecutions(synthetic(input, ["profile_id", "count", "seed"]))
          : itemsOf(input, "items").map((raw, i) =>
              atItem("items", i, () => executionFromSeed(raw, now)),
            );
        this.exchange.addExecutions(batch);
        touch(batch.map((e) => e.record.profile_id));
        return batch.map((e) => structuredClone(e.record));
      },
      seedOrders: (items) => {
        const staged = itemsOf(items, "items").map((raw, i) =>
          atItem("items", i, () => orderFromSeed(raw, now)),
        );
        this.exchange.addOrders(staged.map((s) => s.stored));
        touch(staged.map((s) => s.stored.record.profile_id));
        return staged.map(({ stored, rejection }) => {
          const result: OrderSeedResult = { order: structuredClone(stored.record) };
          if (rejection !== undefined) result.rejection_reason = rejection;
          return result;
        });
      },
      setBalances: (items) => {
        const staged = itemsOf(items, "items").map((raw, i) =>
          atItem("items", i, () => {
            const b = objectOf(raw, "a balance");
            onlyFields(b, ["profile_id", "asset", "amount"], "a balance");
            return {
              profileId: requiredString(b, "profile_id"),
              asset: assetField(b, "asset"),
              value: parseDecimal(b.amount, "amount"),
            };
          }),
        );
        for (const s of staged) this.transfers.setBalance(s.profileId, s.asset, s.value);
        touch(staged.map((s) => s.profileId));
        return staged.map(
          (s): Balance => ({
            profile_id: s.profileId,
            asset: s.asset,
            available: formatDecimal(this.transfers.balanceOf(s.profileId, s.asset)),
          }),
        );
      },
      balancesOf: (profileId) => this.transfers.balancesOf(profileId),
      setTransferFees: (fees) => {
        const table = new Map<string, bigint>();
        for (const [asset, fee] of Object.entries(objectOf(fees, "the fee table"))) {
          assetField({ asset }, "asset");
          table.set(asset, parseDecimal(fee, `fee of ${asset}`));
        }
        this.transfers.setFees(table);
      },
      transfers: (filter) => this.transfers.list(filter),
      seedDepositAddresses: (input) => {
        const batch = isSynthetic(input)
          ? syntheticAddresses(
              synthetic(input, ["count", "seed", "profile_ids", "identity_ids"]),
              this.customerId,
            )
          : itemsOf(input, "items").map((raw, i) =>
              atItem("items", i, () => addressFromSeed(raw, now, this.customerId)),
            );
        this.addresses.add(batch);
        touch(batch.map((a) => a.record.profile_id));
        return batch.map((a) => structuredClone(a.record));
      },
      seedOrchestrationRules: (items) => {
        const batch = itemsOf(items, "items").map((raw, i) =>
          atItem("items", i, () => ruleFromSeed(raw, now)),
        );
        this.rules.add(batch);
        touch(batch.map((r) => r.profile_id));
        return batch.map((r) => structuredClone(r));
      },
      orchestrationRules: () => this.rules.all(),
    };
  }
}
