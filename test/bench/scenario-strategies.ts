/**
 * Scenario f — the filtered strategy beside bulk (issue 12): for each size, one sandbox process
 * (N identities, half the flagged ones migrated, limits off) and, per backend, `plan --state bulk`
 * then `plan --state filtered`, each on a freshly seeded database. Figures side by side: listing
 * requests, wall time, peak RSS; target: filtered sends at most (identities holding a SELL_ONLY ÷
 * 1000) + 5 listing requests. `--quick` runs the smallest size only.
 */

import type { BenchKit } from "./scenario-kit.ts";
import { type PlanRunFigures, planOnce, planSandbox } from "./scenario-plan.ts";

const side = (r: PlanRunFigures) => ({
  listing_requests: r.listing_requests,
  wall_s: r.wall_s,
  peak_rss_mb: r.peak_rss_mb,
  identities_listed: r.listing?.identities ?? null,
  listing_pages: r.listing?.pages ?? null,
});

/** Scenario f: its JSON figures. */
export async function strategiesScenario(kit: BenchKit): Promise<Record<string, unknown>> {
  const comparisons: Record<string, unknown>[] = [];
  // A smoke test (--quick without --sizes) shows the comparison runs: its smallest size is enough.
  const sizes = kit.quick && !kit.sizesGiven ? [Math.min(...kit.sizes)] : kit.sizes;
  for (const identities of sizes) {
    const sandbox = await planSandbox(kit, identities);
    try {
      for (const backend of kit.backends) {
        const bulk = await planOnce(kit, sandbox, backend, identities, "bulk");
        const filtered = await planOnce(kit, sandbox, backend, identities, "filtered");
        // The bulk listing saw every identity, so its SELL_ONLY count is the platform's.
        const holders = Number(bulk.listing?.sell_only_identities ?? Number.NaN);
        const budget = Math.ceil(holders / 1000) + 5;
        const line = {
          backend,
          identities,
          sell_only_holders: holders,
          bulk: side(bulk),
          filtered: side(filtered),
          target: {
            filtered_listing_requests_max: budget,
            filtered_listing_requests_met: filtered.listing_requests <= budget,
          },
          same_findings_but_existence:
            filtered.missing_client_control >= bulk.missing_client_control,
        };
        kit.log(`  ${JSON.stringify(line)}`);
        comparisons.push(line);
      }
    } finally {
      await sandbox.stop();
    }
  }
  return {
    setup: {
      sandbox: "separate process (CLI), faults off, --rate-limit 0, migrated fraction 0.5",
      tool: `${kit.runner === "dist" ? "node dist/src/bin.js" : "node src/cli.ts"} plan --state bulk|filtered --json (default --rate 40, --concurrency 8)`,
      peak_rss: "VmHWM of the tool process, polled every 50 ms",
    },
    comparisons,
  };
}
