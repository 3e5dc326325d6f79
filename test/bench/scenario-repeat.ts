/**
 * Scenario e — a second plan on the same database. Real use repeats runs on one database (plan,
 * then apply; reconcile every night), so earlier runs' rows are already in the tool's tables when
 * the next run starts. This times two `plan --state bulk` runs back to back on one database, at the
 * smallest --sizes value, and reports the slowdown of the second. Timings are reported, never
 * asserted; a second run that overruns its time limit fails the scenario.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type BenchKit,
  expectExit,
  round,
  runTool,
  startBenchSandbox,
  type ToolRun,
} from "./scenario-kit.ts";
import { planPhases } from "./scenario-plan.ts";
import { type BackendName, openTarget, seedTarget } from "./scenario-postgres.ts";

const SEED = 5;
const TIMEOUT_MS = 15 * 60_000;

async function repeatOnce(
  kit: BenchKit,
  backend: BackendName,
  identities: number,
  env: Record<string, string>,
) {
  const target = await openTarget(kit.cleanup, kit.postgres, backend);
  const out = mkdtempSync(join(tmpdir(), "cm-bench-report-"));
  const removeOut = kit.cleanup.add(`remove ${out}`, () =>
    rmSync(out, { recursive: true, force: true }),
  );
  try {
    await seedTarget(kit, target, identities, SEED);
    const runs: ToolRun[] = [];
    for (const n of [1, 2]) {
      kit.log(`plan #${n} of ${identities} identities on ${backend} (same database)...`);
      const run = await runTool(
        kit,
        ["plan", "--state", "bulk", "--json", "--out", join(out, String(n)), ...target.args],
        env,
        TIMEOUT_MS,
      );
      expectExit(run, [0, 2], `plan #${n} on ${backend}`);
      runs.push(run);
    }
    const [first, second] = runs as [ToolRun, ToolRun];
    const figures = {
      backend,
      identities,
      first_wall_s: round(first.wallS, 1),
      second_wall_s: round(second.wallS, 1),
      slowdown: round(second.wallS / first.wallS, 1),
      first_phases_s: planPhases(first),
      second_phases_s: planPhases(second),
      same_findings:
        JSON.stringify(first.summary?.findings) === JSON.stringify(second.summary?.findings),
    };
    kit.log(`  ${JSON.stringify(figures)}`);
    return figures;
  } finally {
    await removeOut();
    await target.drop();
  }
}

/** Scenario e: its JSON figures. */
export async function repeatScenario(kit: BenchKit): Promise<Record<string, unknown>> {
  const identities = Math.min(...kit.sizes);
  const sandbox = await startBenchSandbox(kit, [
    "--identities",
    String(identities),
    "--seed",
    String(SEED),
    "--rate-limit",
    "0",
    "--token-rate-limit",
    "0",
  ]);
  try {
    const runs = [];
    for (const backend of kit.backends) {
      runs.push(await repeatOnce(kit, backend, identities, sandbox.env));
    }
    return {
      setup: {
        what: "two plan --state bulk runs back to back on one database (the first run's rows stay in the tool's tables)",
        sandbox: "separate process (CLI), faults off, --rate-limit 0",
        time_limit_s: TIMEOUT_MS / 1000,
      },
      runs,
    };
  } finally {
    await sandbox.stop();
  }
}
