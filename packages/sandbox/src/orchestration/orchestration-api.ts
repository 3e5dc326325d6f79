import type { SandboxContext } from "../context.ts";
import { atItem } from "../input/body-fields.ts";
import { itemsOf } from "../input/seed-input.ts";
import { ruleFromSeed } from "./orchestration-store.ts";
import type { OrchestrationApi } from "./types.ts";

/**
 * The orchestration seeding API over a context: ACTIVE rules from seeds, and every rule as it
 * stands. A refused call stores nothing.
 *
 * @example
 *   orchestrationApi(ctx).orchestrationRules(); // [{ id, ref_id, status: "ACTIVE", ... }]
 */
export function orchestrationApi(ctx: SandboxContext): OrchestrationApi {
  return {
    seedOrchestrationRules: (items) => {
      const batch = itemsOf(items, "items").map((raw, i) =>
        atItem("items", i, () => ruleFromSeed(raw, ctx.nextCreatedAt)),
      );
      ctx.rules.add(batch);
      for (const r of batch) ctx.profiles.add(r.profile_id);
      return batch.map((r) => structuredClone(r));
    },
    orchestrationRules: () => ctx.rules.all(),
  };
}
