/**
 * Scenario l — scale to ten million. The same plan as scenario a (`plan --state bulk --json`, the
 * tool's default budget, a sandbox process with its rate limits off) on PostgreSQL at 1,000,000
 * and at 10,000,000 identities, side by side in one bench run: wall and peak RSS of each, and
 * the large run's ÷ the small run's (issue 30's targets: ≤ 10.5× wall, ≤ 1.15× peak RSS). The
 * sandbox's own peak RSS is printed too: it holds every identity in memory.
 * `--sizes` gives the two sizes (smallest and largest); `--quick` runs 10,000 and 100,000.
 */
import { readFileSync } from "node:fs";
import { type BenchKit, round } from "./scenario-kit.ts";
import { type PlanRunFigures, planOnce, planSandbox } from "./scenario-plan.ts";

const WALL_TARGET = 10.5;
const RSS_TARGET = 1.15;

function vmHwmMb(pid: number): number | null {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** Scenario l: its JSON figures. */
export async function scaleScenario(kit: BenchKit): Promise<Record<string, unknown>> {
  if (!kit.backends.includes("postgres") || !kit.postgres) {
    throw new Error("scale to ten million runs on PostgreSQL only (--backends postgres)");
  }
  const sizes = kit.sizesGiven
    ? [Math.min(...kit.sizes), Math.max(...kit.sizes)]
    : kit.quick
      ? [10_000, 100_000]
      : [1_000_000, 10_000_000];
  const runs: (PlanRunFigures & { sandbox_peak_rss_mb: number | null })[] = [];
  for (const identities of sizes) {
    // Seeding ten million identities in the sandbox's memory takes minutes: 10 a million.
    const readyTimeoutMs = Math.max(300_000, (identities / 1_000_000) * 600_000);
    const sandbox = await planSandbox(kit, identities, [], readyTimeoutMs);
    try {
      // Debug lines time the source pass and the findings, and tell what pages were held.
      const run = await planOnce(kit, sandbox, "postgres", identities, "bulk", [
        "--log-level",
        "debug",
      ]);
      runs.push({ ...run, sandbox_peak_rss_mb: vmHwmMb(sandbox.pid) });
      kit.log(`plan of ${identities}: ${run.wall_s} s, ${run.peak_rss_mb} MB`);
    } finally {
      await sandbox.stop();
    }
  }
  const [small, large] = runs as [(typeof runs)[0], (typeof runs)[0]];
  // Judged unrounded: 180 MB ÷ 156 MB is 1.1538, over 1.15, though it prints as 1.15.
  const wallRatio = large.wall_s / small.wall_s;
  const rssRatio = large.peak_rss_mb / small.peak_rss_mb;
  const figures = (r: (typeof runs)[0]) => ({
    identities: r.identities,
    wall_s: r.wall_s,
    peak_rss_mb: r.peak_rss_mb,
    peak_rss_at_s: r.peak_rss_at_s,
    identities_per_s: r.identities_per_s,
    seed_wall_s: r.seed.wall_s,
    phases_s: r.phases_s,
    held: r.held ?? null,
    sandbox_peak_rss_mb: r.sandbox_peak_rss_mb,
    exit_code: r.exit_code,
  });
  return {
    backend: "postgres",
    small: figures(small),
    large: figures(large),
    wall_ratio: round(wallRatio, 3),
    peak_rss_ratio: round(rssRatio, 3),
    targets: {
      wall_within_10_5x: wallRatio <= WALL_TARGET,
      rss_within_1_15x: rssRatio <= RSS_TARGET,
    },
    runs,
  };
}
