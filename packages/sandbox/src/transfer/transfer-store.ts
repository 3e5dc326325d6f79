import { randomUUID } from "node:crypto";
import { compact } from "../input/body-fields.ts";
import { formatDecimal } from "../input/decimal.ts";
import type { Metadata } from "../input/seed-input.ts";
import type { Balance, TransferRecord } from "./types.ts";

export interface InternalTransfer {
  fromProfileId: string;
  toProfileId: string;
  /** Fixed point, 18 decimals. */
  amount: bigint;
  asset: string;
  refId: string | undefined;
  metadata: Metadata;
  recipientMetadata: Metadata;
  fromIdentityId: string | undefined;
  fromAccountId: string | undefined;
  toIdentityId: string | undefined;
  toAccountId: string | undefined;
}

export type TransferOutcome =
  | { kind: "done"; debit: TransferRecord; credit: TransferRecord }
  | { kind: "insufficient"; available: bigint; needed: bigint; fee: bigint };

/**
 * Per-profile balances in fixed point, the fee table and the transfer ledger. A transfer debits
 * amount + fee from the sender and credits amount to the receiver in one synchronous step, so no
 * request can observe half of it; both records share a group_id.
 *
 * @example
 *   const store = new TransferStore("customer-1");
 *   store.setBalance("p1", "BTC", 10n ** 18n);
 *   store.transfer({ fromProfileId: "p1", toProfileId: "p2", amount: 10n ** 17n, asset: "BTC", ... });
 */
export class TransferStore {
  private balances = new Map<string, Map<string, bigint>>();
  private fees = new Map<string, bigint>();
  private ledger: TransferRecord[] = [];
  /** ref_id → the sender's record, for replay protection. */
  private byRef = new Map<string, TransferRecord>();

  private readonly customerId: string;

  constructor(customerId: string) {
    this.customerId = customerId;
  }

  get transferCount(): number {
    return this.ledger.length / 2;
  }

  setBalance(profileId: string, asset: string, value: bigint): void {
    let assets = this.balances.get(profileId);
    if (!assets) {
      assets = new Map();
      this.balances.set(profileId, assets);
    }
    assets.set(asset, value);
  }

  balanceOf(profileId: string, asset: string): bigint {
    return this.balances.get(profileId)?.get(asset) ?? 0n;
  }

  balancesOf(profileId: string): Balance[] {
    const assets = this.balances.get(profileId);
    if (!assets) return [];
    return [...assets]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([asset, v]) => ({ profile_id: profileId, asset, available: formatDecimal(v) }));
  }

  setFees(fees: ReadonlyMap<string, bigint>): void {
    this.fees = new Map(fees);
  }

  feeOf(asset: string): bigint {
    return this.fees.get(asset) ?? 0n;
  }

  byRefId(refId: string): TransferRecord | undefined {
    return this.byRef.get(refId);
  }

  transfer(t: InternalTransfer, now: Date): TransferOutcome {
    const fee = this.feeOf(t.asset);
    const needed = t.amount + fee;
    const available = this.balanceOf(t.fromProfileId, t.asset);
    if (available < needed) return { kind: "insufficient", available, needed, fee };
    this.setBalance(t.fromProfileId, t.asset, available - needed);
    this.setBalance(t.toProfileId, t.asset, this.balanceOf(t.toProfileId, t.asset) + t.amount);
    const at = now.toISOString();
    const groupId = randomUUID();
    const record = (
      side: "DEBIT" | "CREDIT",
      fields: Pick<TransferRecord, "profile_id" | "fee" | "total" | "metadata"> &
        Partial<Pick<TransferRecord, "ref_id" | "identity_id" | "account_id">>,
    ): TransferRecord =>
      compact({
        id: randomUUID(),
        customer_id: this.customerId,
        profile_id: fields.profile_id,
        ref_id: fields.ref_id,
        amount: formatDecimal(t.amount),
        fee: fields.fee,
        total: fields.total,
        asset: t.asset,
        balance_asset: t.asset,
        direction: side,
        type: side === "DEBIT" ? "INTERNAL_TRANSFER_DEBIT" : "INTERNAL_TRANSFER_CREDIT",
        status: "COMPLETED",
        group_id: groupId,
        metadata: fields.metadata,
        identity_id: fields.identity_id,
        account_id: fields.account_id,
        created_at: at,
        updated_at: at,
      });
    const debit = record("DEBIT", {
      profile_id: t.fromProfileId,
      ref_id: t.refId,
      fee: formatDecimal(fee),
      total: formatDecimal(needed),
      metadata: t.metadata,
      identity_id: t.fromIdentityId,
      account_id: t.fromAccountId,
    });
    // The receiver pays no fee: its balance change (amount - fee for a deposit) is the amount.
    const credit = record("CREDIT", {
      profile_id: t.toProfileId,
      fee: "0",
      total: formatDecimal(t.amount),
      metadata: t.recipientMetadata,
      identity_id: t.toIdentityId,
      account_id: t.toAccountId,
    });
    this.ledger.push(debit, credit);
    if (t.refId !== undefined) this.byRef.set(t.refId, debit);
    return { kind: "done", debit, credit };
  }

  list(filter: { profileId?: string; groupId?: string } = {}): TransferRecord[] {
    return this.ledger
      .filter(
        (r) =>
          (filter.profileId === undefined || r.profile_id === filter.profileId) &&
          (filter.groupId === undefined || r.group_id === filter.groupId),
      )
      .map((r) => structuredClone(r));
  }

  reset(): void {
    this.balances = new Map();
    this.fees = new Map();
    this.ledger = [];
    this.byRef = new Map();
  }
}
