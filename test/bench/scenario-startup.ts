/**
 * Scenario k — start-up. Pairs, taken in turn (A B A B …) so a drift of the machine's speed
 * touches both alike: `controls-migrate --version` and `--help` against a bare `node -e 0`, each
 * pair's ratio kept and the median quoted. Then `status` on PostgreSQL and on PGlite with no run
 * going (a migrated database, nothing run yet: status says so and exits 1), wall and peak RSS
 * (from `/usr/bin/time -f %M` when present). Targets (issue 30): --version ≤ 2×, --help ≤ 3×,
 * status on PostgreSQL ≤ 0.25 s.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { type BenchKit, REPO_ROOT, round } from "./scenario-kit.ts";
import { openTarget } from "./scenario-postgres.ts";

const TIME = "/usr/bin/time";

interface Timed {
  readonly wallS: number;
  readonly peakRssMb: number | null;
  readonly code: number | null;
}

/** Runs node with `args` once; wall from spawn to exit; peak RSS when /usr/bin/time exists. */
function timed(args: readonly string[]): Timed {
  const withTime = existsSync(TIME);
  const argv = withTime
    ? [TIME, "-f", "%M", process.execPath, ...args]
    : [process.execPath, ...args];
  const t0 = performance.now();
  const r = spawnSync(argv[0] as string, argv.slice(1), {
    cwd: REPO_ROOT,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  const wallS = (performance.now() - t0) / 1000;
  const kb = withTime ? Number(r.stderr.trim().split("\n").at(-1)) : Number.NaN;
  return { wallS, peakRssMb: Number.isFinite(kb) ? Math.round(kb / 1024) : null, code: r.status };
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

function toolArgs(kit: BenchKit, args: readonly string[]): string[] {
  return kit.runner === "dist"
    ? ["dist/src/cli.js", ...args]
    : ["--import", "tsx", "src/cli.ts", ...args];
}

/** `pairs` runs of A and of B in turn, after one warm-up each: medians and the median ratio. */
function pairs(a: readonly string[], b: readonly string[], count: number) {
  timed(a);
  timed(b);
  const as: number[] = [];
  const bs: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < count; i++) {
    const ta = timed(a).wallS;
    const tb = timed(b).wallS;
    as.push(ta);
    bs.push(tb);
    ratios.push(ta / tb);
  }
  return {
    pairs: count,
    wall_s_median: round(median(as), 3),
    node_e_0_wall_s_median: round(median(bs), 3),
    ratio_median: round(median(ratios)),
    ratio_min: round(Math.min(...ratios)),
    ratio_max: round(Math.max(...ratios)),
  };
}

/** `status` with no run going: several runs, the median wall and the largest peak RSS. */
function statusRuns(kit: BenchKit, dbArgs: readonly string[], count: number) {
  timed(toolArgs(kit, ["status", ...dbArgs]));
  const runs = Array.from({ length: count }, () => timed(toolArgs(kit, ["status", ...dbArgs])));
  return {
    runs: count,
    exit_code: runs[0]?.code ?? null,
    wall_s_median: round(median(runs.map((r) => r.wallS)), 3),
    wall_s_max: round(Math.max(...runs.map((r) => r.wallS)), 3),
    peak_rss_mb: Math.max(...runs.map((r) => r.peakRssMb ?? 0)) || null,
  };
}

/** Scenario k: its JSON figures. */
export async function startupScenario(kit: BenchKit): Promise<Record<string, unknown>> {
  const n = kit.quick ? 3 : 10;
  const node0 = ["-e", "0"];
  const version = pairs(toolArgs(kit, ["--version"]), node0, n);
  kit.log(`--version: ${version.ratio_median}× node -e 0`);
  const help = pairs(toolArgs(kit, ["--help"]), node0, n);
  kit.log(`--help: ${help.ratio_median}× node -e 0`);
  const status: Record<string, unknown> = {};
  for (const backend of kit.backends) {
    const target = await openTarget(kit.cleanup, kit.postgres, backend);
    try {
      const migrated = timed(toolArgs(kit, ["db", "migrate", ...target.args]));
      if (migrated.code !== 0) throw new Error(`db migrate on ${backend} exited ${migrated.code}`);
      status[backend] = statusRuns(kit, target.args, kit.quick ? 3 : 5);
      kit.log(`status on ${backend}: ${JSON.stringify(status[backend])}`);
    } finally {
      await target.drop();
    }
  }
  const pgStatus = status.postgres as { wall_s_median: number } | undefined;
  return {
    tool: `${kit.runner === "dist" ? "node dist/src/cli.js" : "node --import tsx src/cli.ts"} --version | --help | status`,
    version,
    help,
    status_no_run: status,
    targets: {
      version_within_2x: version.ratio_median <= 2,
      help_within_3x: help.ratio_median <= 3,
      ...(pgStatus ? { status_postgres_within_0_25_s: pgStatus.wall_s_median <= 0.25 } : {}),
    },
  };
}
