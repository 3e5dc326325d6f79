/**
 * Scenario g — listings over a slow network (issue 18): for each size, one sandbox process (N
 * identities, half the flagged ones migrated, limits off) whose latency is set to 0 and then
 * 150 ms per request through its admin API; per backend and strategy (bulk, filtered), a plan at
 * each latency on a freshly seeded database. A single cursor would take pages × max(1/rate,
 * latency); the target is wall(150 ms) ≤ 1.3 × wall(0 ms) for the same size and strategy.
 */
import type { BenchKit, BenchSandbox } from "./scenario-kit.ts";
import { type PlanRunFigures, planOnce, planSandbox } from "./scenario-plan.ts";

const LATENCIES = [0, 150] as const;

async function setLatency(sandbox: BenchSandbox, ms: number): Promise<void> {
  const res = await fetch(`${sandbox.info.admin_url}/faults`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ latency_ms: ms }),
  });
  if (!res.ok) throw new Error(`the sandbox refused latency ${ms} ms: ${res.status}`);
}

const side = (r: PlanRunFigures) => ({
  wall_s: r.wall_s,
  listing_s: r.phases_s.platform_listing,
  listing_requests: r.listing_requests,
  peak_cursors: r.listing?.peak_parallel ?? null,
  windows: r.listing?.windows ?? null,
  page_latency_p50_ms: r.listing?.latency_p50_ms ?? null,
  peak_rss_mb: r.peak_rss_mb,
});

/** Scenario g: its JSON figures. */
export async function latencyScenario(kit: BenchKit): Promise<Record<string, unknown>> {
  const sizes = kit.sizesGiven ? kit.sizes : kit.quick ? [500] : [200_000, 1_000_000];
  const comparisons: Record<string, unknown>[] = [];
  for (const identities of sizes) {
    const sandbox = await planSandbox(kit, identities);
    try {
      for (const backend of kit.backends) {
        for (const state of ["bulk", "filtered"] as const) {
          const runs: PlanRunFigures[] = [];
          for (const latency of LATENCIES) {
            await setLatency(sandbox, latency);
            runs.push(await planOnce(kit, sandbox, backend, identities, state));
          }
          const [fast, slow] = runs as [PlanRunFigures, PlanRunFigures];
          const ratio = Math.round((slow.wall_s / fast.wall_s) * 100) / 100;
          const line = {
            backend,
            identities,
            state,
            latency_0_ms: side(fast),
            latency_150_ms: side(slow),
            wall_ratio: ratio,
            single_cursor_floor_150_ms_s: Math.round(slow.listing_requests * 0.15 * 10) / 10,
            target: { wall_ratio_max: 1.3, met: ratio <= 1.3 },
          };
          kit.log(`  ${JSON.stringify(line)}`);
          comparisons.push(line);
        }
      }
    } finally {
      await sandbox.stop();
    }
  }
  return {
    setup: {
      sandbox:
        "separate process (CLI), --rate-limit 0, migrated fraction 0.5, latency per request set through PUT /__sandbox/faults",
      tool: `${kit.runner === "dist" ? "node dist/src/bin.js" : "node src/cli.ts"} plan --state bulk|filtered --json (default --rate 40, --concurrency 8, --listing-parallelism 8)`,
      peak_rss: "VmHWM of the tool process, polled every 50 ms",
    },
    comparisons,
  };
}
