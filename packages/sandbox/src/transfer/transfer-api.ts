import type { SandboxContext } from "../context.ts";
import { assetField, atItem, FieldReader, objectOf } from "../input/body-fields.ts";
import { formatDecimal, parseDecimal } from "../input/decimal.ts";
import { itemsOf } from "../input/seed-input.ts";
import type { Balance, TransferApi } from "./types.ts";

/**
 * The transfer domain's seeding API over a context: balances per profile and asset, the fee
 * table, and the ledger for inspection. A refused call changes nothing.
 *
 * @example
 *   transferApi(ctx).setBalances([{ profile_id: "p1", asset: "BTC", amount: "1.5" }]);
 */
export function transferApi(ctx: SandboxContext): TransferApi {
  const store = ctx.transfers;
  return {
    setBalances: (items) => {
      const staged = itemsOf(items, "items").map((raw, i) =>
        atItem("items", i, () => {
          const f = new FieldReader(raw, "a balance", ["profile_id", "asset", "amount"]);
          return {
            profileId: f.required("profile_id"),
            asset: f.asset("asset"),
            value: parseDecimal(f.body.amount, "amount"),
          };
        }),
      );
      for (const s of staged) store.setBalance(s.profileId, s.asset, s.value);
      for (const s of staged) ctx.profiles.add(s.profileId);
      return staged.map(
        (s): Balance => ({
          profile_id: s.profileId,
          asset: s.asset,
          available: formatDecimal(store.balanceOf(s.profileId, s.asset)),
        }),
      );
    },
    balancesOf: (profileId) => store.balancesOf(profileId),
    setTransferFees: (fees) => {
      const table = new Map<string, bigint>();
      for (const [asset, fee] of Object.entries(objectOf(fees, "the fee table"))) {
        assetField({ asset }, "asset");
        table.set(asset, parseDecimal(fee, `fee of ${asset}`));
      }
      store.setFees(table);
    },
    transfers: (filter) => store.list(filter),
  };
}
