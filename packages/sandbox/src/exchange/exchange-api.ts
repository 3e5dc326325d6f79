import type { SandboxContext } from "../context.ts";
import { atItem } from "../input/body-fields.ts";
import { isSynthetic, itemsOf, synthetic } from "../input/seed-input.ts";
import { executionFromSeed, orderFromSeed, syntheticExecutions } from "./exchange-seed.ts";
import type { ExchangeApi, OrderSeedResult } from "./types.ts";

/**
 * The exchange's seeding API over a context: quote executions (items or synthetic) and orders
 * (the acceptance rules applied). A call stores all of its items or none; every profile it names
 * exists from then on.
 *
 * @example
 *   exchangeApi(ctx).seedQuoteExecutions({ profile_id: "p1", count: 500, seed: 1 });
 */
export function exchangeApi(ctx: SandboxContext): ExchangeApi {
  const now = ctx.nextCreatedAt;
  return {
    seedQuoteExecutions: (input) => {
      const batch = isSynthetic(input)
        ? syntheticExecutions(synthetic(input, ["profile_id", "count", "seed"]))
        : itemsOf(input, "items").map((raw, i) =>
            atItem("items", i, () => executionFromSeed(raw, now)),
          );
      ctx.exchange.addExecutions(batch);
      for (const e of batch) ctx.profiles.add(e.record.profile_id);
      return batch.map((e) => structuredClone(e.record));
    },
    seedOrders: (items) => {
      const staged = itemsOf(items, "items").map((raw, i) =>
        atItem("items", i, () => orderFromSeed(raw, now)),
      );
      ctx.exchange.addOrders(staged.map((s) => s.stored));
      for (const s of staged) ctx.profiles.add(s.stored.record.profile_id);
      return staged.map(({ stored, rejection }) => {
        const result: OrderSeedResult = { order: structuredClone(stored.record) };
        if (rejection !== undefined) result.rejection_reason = rejection;
        return result;
      });
    },
  };
}
