/**
 * Scenario h — how close the tool runs to its floor, the platform's rate limit (issue 13):
 *
 * - plan on PostgreSQL, `--state bulk --rate 40`, sandbox limits off: wall ÷ (listing pages ÷ 40),
 *   and the time from the last listing page to exit (findings are computed as the listing runs,
 *   so little is left after it);
 * - the same plan at `--rate 1000 --allow-rate-above-limit`: compute-bound, with its phase
 *   breakdown from the tool's log;
 * - `apply --plan P` of N creates against scenario b's binding sandbox: requests on the controls
 *   path (counted by the sandbox) ÷ creates. The plan's state is re-read by a listing, so this is
 *   1.0 plus the few reads of settling; one read per create would make it 2.0.
 *
 * Sizes: the largest of --sizes for the plans (default 1,000,000; --quick 20,000), 10,000 creates
 * (--quick 300).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyClientArgs, applySandboxArgs } from "./scenario-apply.ts";
import {
  type BenchKit,
  expectExit,
  identitiesHolding,
  need,
  round,
  routeCount,
  runTool,
  startBenchSandbox,
} from "./scenario-kit.ts";
import { type PlanRunFigures, planOnce, planSandbox } from "./scenario-plan.ts";
import { openTarget, seedTarget } from "./scenario-postgres.ts";

const SEED = 7;
const CONTROLS = "/v2/identity/controls";

/** wall ÷ (pages ÷ rate), and the time from the last listing page to exit. */
function floorFigures(run: PlanRunFigures, rate: number) {
  const pages = run.listing_requests;
  const after = run.phases_s.after_listing;
  const exit = run.phases_s.exit;
  return {
    rate,
    wall_s: run.wall_s,
    listing_pages: pages,
    listing_floor_s: round(pages / rate, 1),
    wall_over_listing_floor: round(run.wall_s / need(pages / rate, "listing_floor_s"), 2),
    last_page_to_exit_s: after == null || exit == null ? null : round(after + exit, 1),
    phases_s: run.phases_s,
    peak_rss_mb: run.peak_rss_mb,
    rate_limited: run.rate_limited,
  };
}

async function plans(kit: BenchKit, identities: number) {
  if (!kit.postgres) throw new Error("scenario i needs PostgreSQL (BENCH_DATABASE_URL)");
  const sandbox = await planSandbox(kit, identities);
  try {
    // Debug logs carry the end of the source pass and of the findings, for the phase breakdown.
    const debug = ["--log-level", "debug"];
    const at40 = await planOnce(kit, sandbox, "postgres", identities, "bulk", [
      "--rate",
      "40",
      ...debug,
    ]);
    const at1000 = await planOnce(kit, sandbox, "postgres", identities, "bulk", [
      "--rate",
      "1000",
      "--allow-rate-above-limit",
      ...debug,
    ]);
    return {
      plan_rate_40: {
        ...floorFigures(at40, 40),
        ...(identities === 1_000_000
          ? {
              targets: {
                wall_over_floor_le_1_15: at40.wall_s / (at40.listing_requests / 40) <= 1.15,
                last_page_to_exit_le_3_s:
                  (at40.phases_s.after_listing ?? 99) + (at40.phases_s.exit ?? 99) <= 3,
              },
            }
          : {}),
      },
      plan_rate_1000: {
        ...floorFigures(at1000, 1000),
        ...(identities === 1_000_000 ? { targets: { wall_le_20_s: at1000.wall_s <= 20 } } : {}),
      },
    };
  } finally {
    await sandbox.stop();
  }
}

/** plan, then `apply --plan` of its creates; the sandbox counts the controls path. */
async function applyPlan(kit: BenchKit, creates: number) {
  const identities = identitiesHolding(creates, SEED);
  const sandbox = await startBenchSandbox(kit, applySandboxArgs(identities, SEED));
  const target = await openTarget(kit.cleanup, kit.postgres, "postgres");
  const out = mkdtempSync(join(tmpdir(), "cm-bench-apply-plan-"));
  try {
    await seedTarget(kit, target, identities, SEED);
    kit.log(`plan of ${identities} identities, then apply --plan of its ${creates} creates...`);
    const plan = await runTool(
      kit,
      ["plan", "--state", "bulk", "--json", "--no-progress", "--out", join(out, "plan")].concat(
        applyClientArgs,
        target.args,
      ),
      sandbox.env,
      20 * 60_000,
    );
    expectExit(plan, [2], "plan before apply --plan");
    const planId = plan.summary?.run_id;
    if (!planId) throw new Error("the plan printed no summary");
    const before = await sandbox.stats();
    const apply = await runTool(
      kit,
      ["apply", "--plan", planId, "--yes", "--json", "--no-progress"].concat(
        ["--out", join(out, "apply")],
        applyClientArgs,
        target.args,
      ),
      sandbox.env,
      20 * 60_000,
    );
    expectExit(apply, [0], "apply --plan");
    const after = await sandbox.stats();
    const delta = (route: string) => routeCount(after, route) - routeCount(before, route);
    const made = after.writes.creates - before.writes.creates;
    if (made !== creates) throw new Error(`apply --plan created ${made}, expected ${creates}`);
    const onControls = ["GET", "POST", "DELETE"].reduce((n, m) => n + delta(`${m} ${CONTROLS}`), 0);
    const ratio = onControls / made;
    const figures = {
      creates: made,
      controls_path_requests: onControls,
      controls_path_requests_per_create: round(ratio, 3),
      identities_path_requests: delta("GET /v2/identity/identities"),
      apply_wall_s: round(apply.wallS, 1),
      duplicates: after.integrity.identitiesWithDuplicateClientSellOnly,
      ...(creates === 10_000 ? { targets: { per_create_le_1_01: ratio <= 1.01 } } : {}),
    };
    kit.log(`  ${JSON.stringify(figures)}`);
    return figures;
  } finally {
    rmSync(out, { recursive: true, force: true });
    await target.drop();
    await sandbox.stop();
  }
}

/** Scenario h: its JSON figures. */
export async function floorScenario(kit: BenchKit): Promise<Record<string, unknown>> {
  const identities = kit.sizesGiven ? Math.max(...kit.sizes) : kit.quick ? 20_000 : 1_000_000;
  const creates = kit.quick ? 300 : 10_000;
  return {
    setup: {
      plans: `plan --state bulk on PostgreSQL, ${identities} identities, sandbox limits off (--rate-limit 0)`,
      apply_plan: `apply --plan of ${creates} creates against scenario b's sandbox (20 ms, 200 rps, 1 s window), ${applyClientArgs.join(" ")}`,
      last_page_to_exit: "from the tool's `platform: listed` log line to the process's exit",
    },
    ...(await plans(kit, identities)),
    apply_plan: await applyPlan(kit, creates),
  };
}
