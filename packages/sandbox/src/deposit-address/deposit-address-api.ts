import type { SandboxContext } from "../context.ts";
import { atItem } from "../input/body-fields.ts";
import { isSynthetic, itemsOf, synthetic } from "../input/seed-input.ts";
import { addressFromSeed, syntheticAddresses } from "./deposit-address-store.ts";
import type { DepositAddressApi } from "./types.ts";

/**
 * The deposit-address seeding API over a context: items, or `count` synthetic addresses spread
 * over given (or generated) profiles and identities. A refused call stores nothing.
 *
 * @example
 *   depositAddressApi(ctx).seedDepositAddresses({ count: 300 });
 */
export function depositAddressApi(ctx: SandboxContext): DepositAddressApi {
  return {
    seedDepositAddresses: (input) => {
      const batch = isSynthetic(input)
        ? syntheticAddresses(
            synthetic(input, ["count", "seed", "profile_ids", "identity_ids"]),
            ctx.customerId,
          )
        : itemsOf(input, "items").map((raw, i) =>
            atItem("items", i, () => addressFromSeed(raw, ctx.nextCreatedAt, ctx.customerId)),
          );
      ctx.addresses.add(batch);
      for (const a of batch) ctx.profiles.add(a.record.profile_id);
      return batch.map((a) => structuredClone(a.record));
    },
  };
}
