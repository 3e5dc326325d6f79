/**
 * Scenario o — an apply of N creates, then its revert, against the writes' floor (issue 52's
 * acceptance: each within 2× the time its writes take at the rate given, report included). The
 * sandbox holds the source's identities with limits off (--rate-limit 0, no migrated controls);
 * the tool runs `apply --yes --rate R`, then:
 *
 * 1. `revert RUN --dry-run`, interrupted by ONE SIGINT once its first report file appears (the
 *    report stage), with `status` asked meanwhile: the seconds from the signal to exit, the exit
 *    code, and status's exit code and answer time;
 * 2. `revert RUN --dry-run` to its end;
 * 3. `revert RUN --yes --rate R`.
 *
 * Each with wall, peak RSS and, for the two that write, the writes' floor (writes ÷ R) and the
 * seconds from the last write the sandbox counted (polled every 50 ms) to exit: the report stage.
 *
 * @example
 *   npm run bench -- --only o --sizes 20000 --backends postgres     # 20,000 creates
 *   npm run bench -- --only o                                       # 100,000 creates, both backends
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type BenchKit,
  type BenchSandbox,
  expectExit,
  identitiesHolding,
  round,
  runTool,
  sleep,
  startBenchSandbox,
  startTool,
  type ToolRun,
  waitUntil,
} from "./scenario-kit.ts";
import { type BackendName, type DbTarget, openTarget, seedTarget } from "./scenario-postgres.ts";

const SEED = 7;
/** The rate of the apply and the revert: 100,000 creates take 333 s at it. */
const RATE = 300;
const CLIENT = ["--rate", String(RATE), "--allow-rate-above-limit", "--concurrency", "32"];
const TIMEOUT_MS = 60 * 60_000;
const POLL_MS = 50;

type Counter = "creates" | "deletes";

/** Runs the tool, polling the sandbox's write counter: the time of the last write it saw. */
async function timedWrites(
  kit: BenchKit,
  sandbox: BenchSandbox,
  args: string[],
  counter: Counter,
  expected: number,
) {
  const before = (await sandbox.stats()).writes[counter];
  const tool = startTool(kit, args, sandbox.env, TIMEOUT_MS);
  let exited = false;
  void tool.done.finally(() => {
    exited = true;
  });
  let firstAt: number | undefined;
  let lastAt: number | undefined;
  let seen = 0;
  while (!exited) {
    const n = (await sandbox.stats()).writes[counter] - before;
    const at = performance.now();
    if (n > 0 && firstAt === undefined) firstAt = at;
    if (n > seen) [seen, lastAt] = [n, at];
    await sleep(POLL_MS);
  }
  const run = await tool.done;
  const end = performance.now();
  const writes = (await sandbox.stats()).writes[counter] - before;
  if (writes !== expected)
    throw new Error(`${args[0]} made ${writes} ${counter}, expected ${expected}`);
  return {
    run,
    figures: {
      writes,
      wall_s: round(run.wallS, 1),
      writes_floor_s: round(writes / RATE, 1),
      wall_over_floor: round(run.wallS / (writes / RATE), 2),
      writing_s: firstAt && lastAt ? round((lastAt - firstAt) / 1000, 1) : null,
      last_write_to_exit_s: lastAt ? round((end - lastAt) / 1000, 1) : null,
      peak_rss_mb: run.peakRssMb,
    },
  };
}

/** One SIGINT once the dry run's first report file appears; status asked meanwhile. */
async function interruptReport(
  kit: BenchKit,
  env: Record<string, string>,
  args: string[],
  target: DbTarget,
) {
  const out = mkdtempSync(join(tmpdir(), "cm-bench-revert-int-"));
  try {
    const tool = startTool(kit, [...args, "--out", out], env, TIMEOUT_MS);
    let ended: ToolRun | undefined;
    void tool.done.then((r) => {
      ended = r;
    });
    const reporting = () =>
      // Not the folder's lock, nor the start-up's check that the folder can be written.
      readdirSync(out).some((f) => !f.startsWith(".controls-migrate-")) || ended !== undefined;
    await waitUntil(async () => reporting(), "the dry run's first report file", TIMEOUT_MS, 20);
    if (ended) throw new Error(`the dry run ended before its report stage was seen`);
    const s0 = performance.now();
    const status = await runTool(kit, ["status", "--json", ...target.args], env, 60_000);
    const statusS = (performance.now() - s0) / 1000;
    const statusStage = (JSON.parse(status.stdout || "{}") as { stage?: string }).stage ?? null;
    const t0 = performance.now();
    tool.child.kill("SIGINT");
    const run = await tool.done;
    return {
      sigint_to_exit_s: round((performance.now() - t0) / 1000, 2),
      exit_code: run.code,
      status_exit_code: status.code,
      status_s: round(statusS, 2),
      status_stage: statusStage,
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

async function once(kit: BenchKit, backend: BackendName, creates: number) {
  const identities = identitiesHolding(creates, SEED);
  const sandbox = await startBenchSandbox(kit, [
    "--identities",
    String(identities),
    "--seed",
    String(SEED),
    "--migrated-fraction",
    "0",
    "--rate-limit",
    "0",
  ]);
  const target: DbTarget = await openTarget(kit.cleanup, kit.postgres, backend);
  try {
    await seedTarget(kit, target, identities, SEED);
    const common = ["--json", "--no-progress", ...target.args];
    kit.log(`o: apply of ${creates} creates at --rate ${RATE} on ${backend}...`);
    const apply = await timedWrites(
      kit,
      sandbox,
      ["apply", "--yes", ...CLIENT, ...common],
      "creates",
      creates,
    );
    expectExit(apply.run, [0], `apply of ${creates} on ${backend}`);
    const runId = String(apply.run.summary?.run_id);
    kit.log(`o: ${JSON.stringify(apply.figures)}; revert --dry-run interrupted in its report...`);
    const interrupted = await interruptReport(
      kit,
      sandbox.env,
      ["revert", runId, "--dry-run", ...common],
      target,
    );
    kit.log(`o: ${JSON.stringify(interrupted)}; revert --dry-run...`);
    const dry = await runTool(
      kit,
      ["revert", runId, "--dry-run", ...common],
      sandbox.env,
      TIMEOUT_MS,
    );
    expectExit(dry, [0], `revert --dry-run of ${creates} on ${backend}`);
    const dryRun = {
      wall_s: round(dry.wallS, 1),
      over_writes_floor: round(dry.wallS / (creates / RATE), 2),
      peak_rss_mb: dry.peakRssMb,
    };
    kit.log(`o: ${JSON.stringify(dryRun)}; revert --yes...`);
    const revert = await timedWrites(
      kit,
      sandbox,
      ["revert", runId, "--yes", ...CLIENT, ...common],
      "deletes",
      creates,
    );
    expectExit(revert.run, [0], `revert --yes of ${creates} on ${backend}`);
    kit.log(`o: ${JSON.stringify(revert.figures)}`);
    return {
      backend,
      creates,
      identities,
      apply: apply.figures,
      revert_dry_run_interrupted_in_report: interrupted,
      revert_dry_run: dryRun,
      revert: revert.figures,
    };
  } finally {
    await target.drop();
    await sandbox.stop();
  }
}

/** Scenario o: its JSON figures. */
export async function revertScaleScenario(kit: BenchKit): Promise<Record<string, unknown>> {
  const creates = kit.sizesGiven ? Math.max(...kit.sizes) : kit.quick ? 2_000 : 100_000;
  const runs: Record<string, unknown>[] = [];
  for (const backend of kit.backends) runs.push(await once(kit, backend, creates));
  return {
    setup: {
      sandbox: "the source's identities, --migrated-fraction 0, --rate-limit 0",
      client: CLIENT.join(" "),
      writes_floor: `writes ÷ ${RATE}`,
      report_stage: "from the last write the sandbox counted (polled every 50 ms) to exit",
    },
    runs,
  };
}
