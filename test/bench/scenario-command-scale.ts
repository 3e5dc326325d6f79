/**
 * Scenario s — every command at three sizes ten times apart (issue 52 §5): on each backend, a
 * sandbox of N identities (limits off, no migration of its own) and a source of the same N, then
 * `plan`, `apply --yes` (about N ÷ 10 creates: the seeded source's user_disabled share), `report`,
 * `runs`, `status` and `show` of the apply, a second `reconcile --yes` (nothing left to write),
 * `revert --dry-run` and `revert --yes` of the apply. Each command's wall time (process start-up
 * included) and peak RSS (VmHWM), and each figure's ratio to the smallest size's. Ten times the
 * identities may take at most 15 times as long: past that the scenario fails, naming the command,
 * the backend and both times.
 *
 * The writes go at `--rate 2000 --allow-rate-above-limit --concurrency 64` against a sandbox
 * without limits: their wall is the tool's own cost, not a budget's.
 *
 * @example
 *   npm run bench -- --only s                             # 10,000, 100,000 and 1,000,000
 *   npm run bench -- --only s --sizes 10000,100000 --backends pglite
 */
import { syntheticIdentities } from "../../src/contract/index.ts";
import {
  type BenchKit,
  expectExit,
  round,
  runTool,
  startBenchSandbox,
  type ToolRun,
  UNLIMITED_WRITES,
} from "./scenario-kit.ts";
import { type BackendName, openTarget, seedTarget } from "./scenario-postgres.ts";

const SEED = 52;
/** Ten times the rows may take at most this many times as long (wall) or as much memory. */
const MAX_RATIO = 15;
const TIMEOUT_MS = 60 * 60_000;

/** The commands, in the order they run; each one's figures. */
export const COMMANDS = [
  "plan",
  "apply",
  "report",
  "runs",
  "status",
  "show",
  "reconcile",
  "revert --dry-run",
  "revert",
] as const;
type Command = (typeof COMMANDS)[number];

interface CommandFigures {
  readonly wall_s: number;
  readonly peak_rss_mb: number | null;
}

/** One size's figures on one backend. */
export interface ScaleSize {
  readonly identities: number;
  readonly creates: number;
  readonly deletes: number;
  readonly commands: Record<Command, CommandFigures>;
}

const figures = (run: ToolRun): CommandFigures => ({
  wall_s: round(run.wallS, 2),
  peak_rss_mb: run.peakRssMb,
});

/** The first seeded identity with user_disabled: the one `show` asks about. */
function flaggedId(n: number): string {
  for (const row of syntheticIdentities(n, SEED)) if (row.user_disabled) return row.id;
  throw new Error(`no flagged identity among ${n}`);
}

async function sizeOnce(kit: BenchKit, backend: BackendName, n: number): Promise<ScaleSize> {
  const sandbox = await startBenchSandbox(kit, [
    ...["--identities", String(n), "--seed", String(SEED), "--migrated-fraction", "0"],
    ...["--rate-limit", "0", "--token-rate-limit", "0"],
  ]);
  const target = await openTarget(kit.cleanup, kit.postgres, backend);
  try {
    await seedTarget(kit, target, n, SEED);
    const out: Partial<Record<Command, CommandFigures>> = {};
    const tool = async (command: Command, args: string[], codes: number[]) => {
      kit.log(`s: ${command} of ${n} identities on ${backend}...`);
      const run = await runTool(kit, [...args, ...target.args], sandbox.env, TIMEOUT_MS);
      expectExit(run, codes, `${command} of ${n} identities on ${backend}`);
      out[command] = figures(run);
      return run;
    };
    const json = ["--json", "--no-progress"];
    await tool("plan", ["plan", "--state", "bulk", ...json], [0, 2]);
    const apply = await tool("apply", ["apply", "--yes", ...UNLIMITED_WRITES, ...json], [0, 2]);
    const runId = String(apply.summary?.run_id ?? "");
    if (runId === "") throw new Error(`apply of ${n} on ${backend} printed no run id`);
    const creates = (await sandbox.stats()).writes.creates;
    await tool("report", ["report", runId], [0]);
    await tool("runs", ["runs"], [0]);
    await tool("status", ["status", runId], [0]);
    await tool("show", ["show", flaggedId(n)], [0]);
    await tool("reconcile", ["reconcile", "--yes", ...UNLIMITED_WRITES, ...json], [0, 2]);
    await tool("revert --dry-run", ["revert", runId, "--dry-run", ...json], [0]);
    await tool("revert", ["revert", runId, "--yes", ...UNLIMITED_WRITES, ...json], [0, 2]);
    const deletes = (await sandbox.stats()).writes.deletes;
    return { identities: n, creates, deletes, commands: out as Record<Command, CommandFigures> };
  } finally {
    await target.drop();
    await sandbox.stop();
  }
}

/** Each figure's ratio to the smallest size's, and those past {@link MAX_RATIO} per tenfold step. */
export function scaleRatios(backend: string, runs: readonly ScaleSize[]) {
  const first = runs[0] as ScaleSize;
  const toFirst: Record<string, Record<string, number>> = {};
  const over: string[] = [];
  for (const c of COMMANDS) {
    toFirst[c] = {};
    runs.forEach((r, i) => {
      (toFirst[c] as Record<string, number>)[String(r.identities)] = round(
        r.commands[c].wall_s / first.commands[c].wall_s,
        2,
      );
      const prev = runs[i - 1];
      if (!prev) return;
      // Allowed: 1.5 × the growth in identities (15 for ten times as many).
      const allowed = (MAX_RATIO / 10) * (r.identities / prev.identities);
      const wall = r.commands[c].wall_s / prev.commands[c].wall_s;
      if (wall > allowed) {
        over.push(
          `${c} on ${backend}: ${round(wall, 1)}× the wall for ${r.identities / prev.identities}× the identities (${prev.commands[c].wall_s} s → ${r.commands[c].wall_s} s)`,
        );
      }
      const [a, b] = [prev.commands[c].peak_rss_mb, r.commands[c].peak_rss_mb];
      if (a !== null && b !== null && b / a > allowed) {
        over.push(`${c} on ${backend}: peak RSS ${a} MB → ${b} MB`);
      }
    });
  }
  return { toFirst, over };
}

/** Scenario s: its JSON figures; throws when a ratio says super-linear growth. */
export async function commandScaleScenario(kit: BenchKit): Promise<Record<string, unknown>> {
  const sizes = kit.sizesGiven
    ? [...kit.sizes]
    : kit.quick
      ? [1_000, 10_000]
      : [10_000, 100_000, 1_000_000];
  const out: Record<string, unknown> = {
    sizes,
    max_ratio_per_tenfold: MAX_RATIO,
    writes: UNLIMITED_WRITES.join(" "),
  };
  const failures: string[] = [];
  for (const backend of kit.backends) {
    const runs: ScaleSize[] = [];
    for (const n of sizes) runs.push(await sizeOnce(kit, backend, n));
    const { toFirst, over } = scaleRatios(backend, runs);
    out[backend] = { runs, wall_ratio_to_smallest: toFirst };
    failures.push(...over);
  }
  if (failures.length > 0) {
    // A failed scenario's line carries only its error: the figures go to the log first.
    kit.log(`s: figures ${JSON.stringify(out)}`);
    throw new Error(`super-linear growth: ${failures.join("; ")}`);
  }
  return out;
}
