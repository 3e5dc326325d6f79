/**
 * Scenario k — start-up. Pairs, taken in turn (A B A B …) so a drift of the machine's speed
 * touches both alike: `controls-migrate --version` and `--help` against a bare `node -e 0`, each
 * pair's ratio kept and the median quoted. Then `status` on PostgreSQL and on PGlite with no run
 * going (a migrated database, nothing run yet: status says so and exits 1), wall and peak RSS
 * (from `/usr/bin/time -f %M` when present). Then what a new user's first minutes cost: the demo
 * as `npm run demo` runs it, in an empty folder, and the first commands on a fresh `--data-dir`
 * (`db seed` of 10,000 identities, which creates the folder, then `plan` against a sandbox of the
 * same identities), wall and peak RSS each. Targets (issue 30): --version ≤ 2×, --help ≤ 3×,
 * status on PostgreSQL ≤ 0.25 s, the demo ≤ 10 s and ≤ 300 MB, the first plan ≤ 250 MB.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BenchKit, REPO_ROOT, round } from "./scenario-kit.ts";
import { planSandbox } from "./scenario-plan.ts";
import { openTarget } from "./scenario-postgres.ts";

const TIME = "/usr/bin/time";

interface Timed {
  readonly wallS: number;
  readonly peakRssMb: number | null;
  readonly code: number | null;
}

/** Runs node with `args` once; wall from spawn to exit; peak RSS when /usr/bin/time exists. */
function timed(args: readonly string[], env?: Record<string, string>): Timed {
  const withTime = existsSync(TIME);
  const argv = withTime
    ? [TIME, "-f", "%M", process.execPath, ...args]
    : [process.execPath, ...args];
  const t0 = performance.now();
  const r = spawnSync(argv[0] as string, argv.slice(1), {
    cwd: REPO_ROOT,
    env: env ? { ...process.env, ...env } : process.env,
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
  return kit.runner === "dist" ? ["dist/src/bin.js", ...args] : ["src/cli.ts", ...args];
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

const fig = (t: Timed) => ({
  wall_s: round(t.wallS, 2),
  peak_rss_mb: t.peakRssMb,
  exit_code: t.code,
});

/**
 * `npm run demo` as a new user runs it (`scripts/run-demo.mjs`, with npm's `INIT_CWD`, after `npm
 * run build`, which the bench runs first): here straight through node, so npm's own start-up is not
 * counted.
 */
function demoRun(): Timed {
  const dir = mkdtempSync(join(tmpdir(), "cm-bench-demo-"));
  try {
    return timed(["scripts/run-demo.mjs"], { INIT_CWD: dir });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The first commands on a fresh `--data-dir`: `db seed` creates it, then the first `plan`. */
async function firstPlan(kit: BenchKit, identities: number) {
  const dir = mkdtempSync(join(tmpdir(), "cm-bench-first-"));
  const sandbox = await planSandbox(kit, identities);
  try {
    const data = ["--data-dir", join(dir, "data")];
    const seed = timed(
      toolArgs(kit, ["db", "seed", "--identities", String(identities), "--seed", "5", ...data]),
    );
    const plan = timed(
      toolArgs(kit, ["plan", "--json", "--out", join(dir, "out"), ...data]),
      sandbox.env,
    );
    return { identities, seed: fig(seed), plan: fig(plan) };
  } finally {
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  }
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
  const demo = fig(demoRun());
  kit.log(`demo: ${JSON.stringify(demo)}`);
  const first = await firstPlan(kit, 10_000);
  kit.log(`first commands on a fresh --data-dir: ${JSON.stringify(first)}`);
  return {
    tool: `${kit.runner === "dist" ? "node dist/src/bin.js" : "node src/cli.ts"} --version | --help | status`,
    version,
    help,
    status_no_run: status,
    demo,
    first_commands_fresh_data_dir: first,
    targets: {
      demo_within_10_s: demo.exit_code === 0 && demo.wall_s <= 10,
      demo_within_300_mb: demo.peak_rss_mb !== null && demo.peak_rss_mb <= 300,
      first_plan_within_250_mb: first.plan.peak_rss_mb !== null && first.plan.peak_rss_mb <= 250,
      version_within_2x: version.ratio_median <= 2,
      help_within_3x: help.ratio_median <= 3,
      ...(pgStatus ? { status_postgres_within_0_25_s: pgStatus.wall_s_median <= 0.25 } : {}),
    },
  };
}
