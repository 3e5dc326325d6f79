/**
 * Scenario m — the commands whose cost follows the journal, at two sizes ten times apart, on each
 * backend: `revert --dry-run` of an apply, and a second `reconcile` of a source that has shrunk to
 * 1% of the platform (every control the apply made outside it is `unknown_to_source`, and the
 * world delta joins two snapshots of the whole platform). Each figure is printed with its ratio to
 * the smaller size; a ratio over 15 for ten times the rows is super-linear growth, and fails the
 * scenario, naming the command, the backend and both times. Two such defects hid here: a revert
 * of 6,058 creates took 215 s on PGlite, a second reconcile of 60,000 identities 116 s.
 *
 * @example
 *   npm run bench -- --only m                       # 20,000 and 200,000 identities
 *   npm run bench -- --only m --backends pglite --quick
 */
import { applyClientArgs, applySandboxArgs } from "./scenario-apply.ts";
import {
  type BenchKit,
  expectExit,
  round,
  runTool,
  startBenchSandbox,
  type ToolRun,
} from "./scenario-kit.ts";
import { type BackendName, openTarget, seedTarget } from "./scenario-postgres.ts";

const SEED = 13;
/** Ten times the rows may take at most this many times as long. */
const MAX_RATIO = 15;
const TIMEOUT_MS = 30 * 60_000;

/** One size's figures on one backend. */
interface SizeFigures {
  readonly identities: number;
  readonly creates: number;
  readonly revert_dry_run_s: number;
  readonly revert_dry_run_peak_rss_mb: number | null;
  readonly second_reconcile_s: number;
  readonly second_reconcile_peak_rss_mb: number | null;
  /** Controls the second reconcile found on identities the shrunk source no longer holds. */
  readonly orphaned_own_control: number;
}

async function sizeOnce(kit: BenchKit, backend: BackendName, n: number): Promise<SizeFigures> {
  const sandbox = await startBenchSandbox(kit, applySandboxArgs(n, SEED));
  const target = await openTarget(kit.cleanup, kit.postgres, backend);
  try {
    await seedTarget(kit, target, n, SEED);
    const tool = (args: string[]) =>
      runTool(kit, [...args, "--json", "--no-progress", ...target.args], sandbox.env, TIMEOUT_MS);
    kit.log(`m: apply of ${n} identities on ${backend}...`);
    const apply = await tool(["apply", "--yes", ...applyClientArgs]);
    expectExit(apply, [0, 2], `apply of ${n} on ${backend}`);
    const creates = (await sandbox.stats()).writes.creates;
    const revert = await tool(["revert", String(apply.summary?.run_id), "--dry-run"]);
    expectExit(revert, [0], `revert --dry-run of ${creates} creates on ${backend}`);

    // The source shrinks to 1% of the platform: every other control the apply made is orphaned.
    const kept = Math.max(1, Math.round(n / 100));
    const reseed = await runTool(
      kit,
      [
        "db",
        "seed",
        "--identities",
        String(kept),
        "--seed",
        String(SEED),
        "--truncate",
        ...target.args,
      ],
      {},
      TIMEOUT_MS,
    );
    expectExit(reseed, [0], `db seed --truncate --identities ${kept} on ${backend}`);
    const reconcile = () => tool(["reconcile", "--yes", ...applyClientArgs]);
    expectExit(await reconcile(), [0, 2], `first reconcile of ${n} on ${backend}`);
    const second: ToolRun = await reconcile();
    expectExit(second, [0, 2], `second reconcile of ${n} on ${backend}`);
    return {
      identities: n,
      creates,
      revert_dry_run_s: round(revert.wallS, 1),
      revert_dry_run_peak_rss_mb: revert.peakRssMb,
      second_reconcile_s: round(second.wallS, 1),
      second_reconcile_peak_rss_mb: second.peakRssMb,
      orphaned_own_control: second.summary?.findings.orphaned_own_control ?? 0,
    };
  } finally {
    await target.drop();
    await sandbox.stop();
  }
}

/** The time ratios of the larger size to the smaller, and the ones past {@link MAX_RATIO}. */
function ratios(backend: BackendName, small: SizeFigures, large: SizeFigures) {
  const keys = ["revert_dry_run_s", "second_reconcile_s"] as const;
  const r = Object.fromEntries(keys.map((k) => [k, round(large[k] / small[k], 2)]));
  const over = keys
    .filter((k) => (r[k] ?? 0) > MAX_RATIO)
    .map(
      (k) =>
        `${k} on ${backend}: ${r[k]}× for ${large.identities / small.identities}× the identities (${small[k]} s → ${large[k]} s)`,
    );
  return { r, over };
}

/** Runs scenario m on every backend of `kit`; throws when a ratio says super-linear growth. */
export async function historyScaleScenario(kit: BenchKit): Promise<Record<string, unknown>> {
  const sizes = kit.quick ? [2_000, 20_000] : [20_000, 200_000];
  const out: Record<string, unknown> = { sizes, max_ratio: MAX_RATIO };
  const failures: string[] = [];
  for (const backend of kit.backends) {
    const small = await sizeOnce(kit, backend, sizes[0] as number);
    const large = await sizeOnce(kit, backend, sizes[1] as number);
    const { r, over } = ratios(backend, small, large);
    out[backend] = { runs: [small, large], ratio_to_smaller: r };
    failures.push(...over);
  }
  if (failures.length > 0) throw new Error(`super-linear growth: ${failures.join("; ")}`);
  return out;
}
