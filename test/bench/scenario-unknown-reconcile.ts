/**
 * Scenario p — a reconcile whose platform holds about 200,000 identities the source has no row
 * for, each with a SELL_ONLY control (`unknown_to_source`), against its listing floor (issue 52's
 * acceptance: ≤ 1.2× the listing pages ÷ the rate). The sandbox's identities all hold a control
 * (--migrated-fraction 1, --drift-fraction 1, so the clean ones carry drift controls); the source is
 * the first few thousand of them. `reconcile --yes --state bulk --rate 40` on each backend, with
 * its phases from the tool's log.
 *
 * @example
 *   npm run bench -- --only p                                   # 320,000 identities, 3,000 in the source
 *   npm run bench -- --only p --sizes 40000 --backends postgres # a smaller platform
 */

import {
  type BenchKit,
  expectExit,
  need,
  round,
  runTool,
  startBenchSandbox,
} from "./scenario-kit.ts";
import { planPhases } from "./scenario-plan.ts";
import { openTarget, seedTarget } from "./scenario-postgres.ts";

const SEED = 11;
const RATE = 40;
const SOURCE_ROWS = 3_000;

/** Scenario p: its JSON figures. */
export async function unknownReconcileScenario(kit: BenchKit): Promise<Record<string, unknown>> {
  const identities = kit.sizesGiven ? Math.max(...kit.sizes) : kit.quick ? 20_000 : 320_000;
  const sandbox = await startBenchSandbox(kit, [
    "--identities",
    String(identities),
    "--seed",
    String(SEED),
    "--migrated-fraction",
    "1",
    "--drift-fraction",
    "1",
    "--rate-limit",
    "0",
  ]);
  const runs: Record<string, unknown>[] = [];
  try {
    for (const backend of kit.backends) {
      const target = await openTarget(kit.cleanup, kit.postgres, backend);
      try {
        await seedTarget(kit, target, SOURCE_ROWS, SEED);
        kit.log(`p: reconcile of ${SOURCE_ROWS} rows against ${identities} on ${backend}...`);
        const run = await runTool(
          kit,
          ["reconcile", "--yes", "--state", "bulk", "--rate", String(RATE)].concat(
            ["--json", "--no-progress", "--log-level", "debug"],
            target.args,
          ),
          sandbox.env,
          30 * 60_000,
        );
        expectExit(run, [0, 2], `reconcile on ${backend}`);
        const s = run.summary;
        const pages = need(s?.requests["GET /v2/identity/identities"]?.count, "listing pages");
        const floor = pages / RATE;
        const figures = {
          backend,
          unknown_to_source: s?.findings.unknown_to_source ?? 0,
          wall_s: round(run.wallS, 1),
          listing_pages: pages,
          listing_floor_s: round(floor, 1),
          wall_over_listing_floor: round(run.wallS / floor, 2),
          requests: Object.fromEntries(
            Object.entries(s?.requests ?? {}).map(([k, v]) => [k, v.count]),
          ),
          phases_s: planPhases(run),
          peak_rss_mb: run.peakRssMb,
        };
        kit.log(`p: ${JSON.stringify(figures)}`);
        runs.push(figures);
      } finally {
        await target.drop();
      }
    }
  } finally {
    await sandbox.stop();
  }
  return {
    setup: {
      sandbox: `${identities} identities, --migrated-fraction 1 --drift-fraction 1 --rate-limit 0`,
      source_rows: SOURCE_ROWS,
      client: `reconcile --yes --state bulk --rate ${RATE}`,
      listing_floor: `listing pages ÷ ${RATE}`,
    },
    runs,
  };
}
