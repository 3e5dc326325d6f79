/**
 * `npm run bench`: the published performance and reliability figures. Each scenario prints ONE
 * JSON line of figures on stdout and appends it to bench-results/results.jsonl; progress goes to
 * stderr. Exits 1 if a scenario fails (crash, missing figure, duplicate creates); timings are
 * reported, never asserted.
 *
 *   npm run bench                         # everything, full sizes (~15+ minutes)
 *   npm run bench -- --quick              # CI smoke test: small sizes, a couple of minutes
 *   npm run bench -- --only a,c --sizes 100000,1000000 --backends postgres
 *
 * Scenarios: a plan at scale, c memory scaling (from a), b apply throughput and naive baselines,
 * d resume cost after SIGKILL, e a second plan on the same database, f the filtered strategy
 * beside bulk, g bulk and filtered listings at 0 and 150 ms of page latency, h `show` and
 * report.html on 20 runs of the largest size (PostgreSQL only), i the rate floor (plan at 40 and
 * 1000 rps, apply --plan's controls-path requests), j scenario b's apply on PGlite five times,
 * k start-up (--version, --help, status), m revert --dry-run and a second reconcile at two sizes
 * ten times apart, failing on super-linear growth, l plan at 1M and 10M on PostgreSQL (only with
 * --only l), n a night of reconcile --since-last against a complete reconcile after 1,000 outside
 * changes, failing when they differ or, at 1,000,000, past 1/20 of the
 * requests (PostgreSQL; only with --only n; 100,000 identities, --sizes for more), o an apply of
 * 100,000 creates at --rate 300 and its revert (--dry-run interrupted in its report stage,
 * --dry-run, --yes) against the writes' floor (only with --only o; --sizes N for N creates), p a
 * reconcile with about 200,000 unknown_to_source identities against its listing floor (only with
 * --only p), s every command at three sizes (only with --only s).
 * PostgreSQL: BENCH_DATABASE_URL or TEST_DATABASE_URL (an admin URL;
 * a throwaway database is created per run), else a throwaway server started from
 * /usr/lib/postgresql/*\/bin, else the PostgreSQL variants are skipped with the reason printed.
 */
import { execFileSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DIST_IS_CURRENT } from "../helpers/cli-entry.ts";
import { applyRunsScenario, applyScenario } from "./scenario-apply.ts";
import { Cleanup } from "./scenario-cleanup.ts";
import { commandScaleScenario } from "./scenario-command-scale.ts";
import { floorScenario } from "./scenario-floor.ts";
import { historyScaleScenario } from "./scenario-history-scale.ts";
import { type BenchKit, REPO_ROOT, round } from "./scenario-kit.ts";
import { latencyScenario } from "./scenario-latency.ts";
import { memoryScenario } from "./scenario-memory.ts";
import { type PlanRunFigures, planScenario } from "./scenario-plan.ts";
import { type BackendName, findPostgres, type PostgresServer } from "./scenario-postgres.ts";
import { repeatScenario } from "./scenario-repeat.ts";
import { resumeScenario } from "./scenario-resume.ts";
import { revertScaleScenario } from "./scenario-revert-scale.ts";
import { scaleScenario } from "./scenario-scale.ts";
import { showScenario } from "./scenario-show.ts";
import { sinceLastScenario } from "./scenario-since-last.ts";
import { startupScenario } from "./scenario-startup.ts";
import { strategiesScenario } from "./scenario-strategies.ts";
import { unknownReconcileScenario } from "./scenario-unknown-reconcile.ts";

const USAGE = `Usage: npm run bench -- [--quick] [--only a,b,c,d] [--sizes N,M] [--backends postgres,pglite] [--sources]
  --quick      small sizes and short timings (smoke test for CI: that each scenario runs)
  --only       scenarios to run: a plan, b apply, c memory scaling, d resume, e repeat plan,
               f filtered beside bulk, g listings at 0 and 150 ms latency, h show and
               report.html on 20 runs of the largest size (PostgreSQL only), i the rate floor:
               plan at 40 and 1000 rps, apply --plan's controls-path requests,
               j apply on PGlite, 5 runs, k start-up: --version, --help against node -e 0,
               status with no run, m revert --dry-run and a second reconcile at two sizes ten
               times apart (fails on a ratio over 15), l plan at 1M and 10M on PostgreSQL (not
               in the default set: run it with --only l), n reconcile --since-last against a
               complete reconcile after 1,000 outside changes, requests,
               findings, new, resolved and changes.outside compared; fails when they differ or,
               at 1,000,000, past 1/20 of the requests (PostgreSQL; not in the default set:
               --only n; 100,000 identities, the largest --sizes when given, quick 20,000 and
               100 changes), o an apply of 100,000 creates and its revert against the writes'
               floor, SIGINT in the report stage (not in the default set: --only o; the largest
               --sizes as the creates), p a reconcile with about 200,000 unknown_to_source
               identities at --rate 40 against its listing floor (not in the default set:
               --only p; the largest --sizes as the platform's identities), s every command
               (plan, apply, report, runs, status, show, reconcile, revert --dry-run, revert) at
               10,000, 100,000 and 1,000,000 identities, wall and peak RSS, failing on a ratio
               over 15 per tenfold (not in the default set: --only s; --sizes gives its sizes)
               (default a to k and m)
  --sizes      source sizes of scenarios a and f, smallest also for e, largest for h (default
               100000,1000000; quick 1000,2000, f 1000 only); of g too when given (g's default
               200000,1000000; quick 500); the largest of i's plans when given (i's default
               1000000, quick 20000)
  --backends   database backends (default postgres,pglite)
  --sources    run the tool from its TypeScript sources (node src/cli.ts) instead of
               as it ships, node dist/src/bin.js (built first, npm run build, unless built from the
               sources as they are)
Env: BENCH_DATABASE_URL or TEST_DATABASE_URL = PostgreSQL admin URL (else a throwaway server).`;

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    only: { type: "string" },
    sizes: { type: "string" },
    backends: { type: "string", default: "postgres,pglite" },
    sources: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
  strict: true,
});
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

const ORDER = [
  "a",
  "c",
  "b",
  "d",
  "e",
  "f",
  "g",
  "h",
  "i",
  "j",
  "k",
  "m",
  "l",
  "n",
  "o",
  "p",
  "s",
] as const;
type ScenarioId = (typeof ORDER)[number];
const NAMES: Record<ScenarioId, string> = {
  a: "a-plan",
  b: "b-apply",
  c: "c-memory-scaling",
  d: "d-resume-cost",
  e: "e-repeat-plan",
  f: "f-filtered-beside-bulk",
  g: "g-listing-latency",
  h: "h-show-history",
  i: "i-rate-floor",
  j: "j-apply-pglite-runs",
  k: "k-startup",
  l: "l-scale-ten-million",
  m: "m-history-scale",
  n: "n-since-last",
  o: "o-revert-scale",
  p: "p-reconcile-unknown",
  s: "s-command-scale",
};

function list(raw: string, what: string): string[] {
  const items = raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) fail(`${what} is empty`);
  return items;
}

function fail(message: string): never {
  process.stderr.write(`bench: ${message}\n${USAGE}\n`);
  process.exit(1);
}

// l (ten million identities) and s (every command up to a million) load the machine for long, n
// adds its own: run only when asked for.
const only =
  values.only === undefined
    ? ORDER.filter((s) => !(["l", "n", "o", "p", "s"] as string[]).includes(s))
    : list(values.only, "--only");
for (const s of only) if (!ORDER.includes(s as ScenarioId)) fail(`unknown scenario ${s}`);
const selected = ORDER.filter((s) => only.includes(s));
const sizes = (
  values.sizes
    ? list(values.sizes, "--sizes")
    : values.quick
      ? ["1000", "2000"]
      : ["100000", "1000000"]
)
  .map(Number)
  .sort((a, b) => a - b);
if (sizes.some((n) => !Number.isInteger(n) || n < 1)) fail("--sizes must be whole numbers ≥ 1");
const requestedBackends = list(values.backends, "--backends");
for (const b of requestedBackends) {
  if (b !== "postgres" && b !== "pglite") fail(`unknown backend ${b}`);
}
const log = (m: string) =>
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
if (!values.sources && DIST_IS_CURRENT) {
  log("dist/ is built from the sources as they are: not building it again");
} else if (!values.sources) {
  // The tool as it ships: built once here, so the figures are those of the installed command (the
  // sources load several hundred modules at every start).
  log("building dist/ (npm run build)");
  try {
    execFileSync("npm", ["run", "--silent", "build"], { cwd: REPO_ROOT, stdio: "inherit" });
  } catch {
    fail("npm run build failed; fix the build or run the sources with --sources");
  }
  if (!existsSync(join(REPO_ROOT, "dist/src/bin.js"))) fail("the build left no dist/src/bin.js");
}

// The run's own resources (a PostgreSQL server it started) outlive each scenario's.
const cleanup = new Cleanup();
let scenarioCleanup = new Cleanup();
let interrupted = false;
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.once(sig, () => {
    interrupted = true;
    log(`${sig}: stopping child processes and dropping databases`);
    void scenarioCleanup
      .runAll(log)
      .then(() => cleanup.runAll(log))
      .finally(() => process.exit(130));
  });
}
process.once("exit", () => {
  scenarioCleanup.runAllSync();
  cleanup.runAllSync();
});

let postgres: PostgresServer | null = null;
let postgresSkipped: string | undefined;
if (requestedBackends.includes("postgres")) {
  const found = await findPostgres(process.env, cleanup, log);
  if ("postgres" in found) {
    postgres = found.postgres;
    log(`PostgreSQL ${postgres.version} (${postgres.origin})`);
  } else {
    postgresSkipped = found.reason;
    log(`PostgreSQL variants SKIPPED: ${found.reason}`);
  }
}
const backends = requestedBackends.filter(
  (b) => b === "pglite" || postgres !== null,
) as BackendName[];
if (backends.length === 0) fail(`no backend left to run on (${postgresSkipped})`);

const baseKit: Omit<BenchKit, "cleanup"> = {
  quick: values.quick,
  sizes,
  sizesGiven: values.sizes !== undefined,
  backends,
  postgres,
  runner: values.sources ? "sources" : "dist",
  log,
};

function commit(): string | null {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: REPO_ROOT,
      encoding: "utf8",
    }).trim();
  } catch {
    return null;
  }
}

const machine = {
  nproc: os.availableParallelism(),
  cpu: os.cpus()[0]?.model ?? "unknown",
  memory_gb: round(os.totalmem() / 1024 ** 3, 1),
  load_avg_1m_at_start: round(os.loadavg()[0] ?? 0, 2),
  node: process.version,
  postgres: postgres?.version ?? null,
  platform: `${os.platform()} ${os.release()}`,
};
const common = {
  // One `npm run bench` invocation: `npm run docs:performance` renders the README from one run.
  run_started_at: new Date().toISOString(),
  quick: baseKit.quick,
  runner: baseKit.runner,
  commit: commit(),
  machine,
  ...(postgresSkipped ? { postgres_skipped: postgresSkipped } : {}),
};

const resultsDir = join(REPO_ROOT, "bench-results");
mkdirSync(resultsDir, { recursive: true });
const emit = (line: Record<string, unknown>) => {
  const text = JSON.stringify(line);
  process.stdout.write(`${text}\n`);
  appendFileSync(join(resultsDir, "results.jsonl"), `${text}\n`);
};

let planRuns: PlanRunFigures[] | undefined;
const failed: string[] = [];
for (const id of selected) {
  if (interrupted) break;
  const started = performance.now();
  // Every figure line carries the load it was measured under: other work shares the cores.
  const load = { load_avg_1m_at_scenario_start: round(os.loadavg()[0] ?? 0, 2) };
  scenarioCleanup = new Cleanup();
  const kit: BenchKit = { ...baseKit, cleanup: scenarioCleanup };
  log(`scenario ${NAMES[id]}`);
  try {
    let figures: Record<string, unknown>;
    if (id === "a") {
      figures = await planScenario(kit);
      planRuns = figures.runs as PlanRunFigures[];
    } else if (id === "c") figures = await memoryScenario(kit, planRuns);
    else if (id === "b") figures = await applyScenario(kit);
    else if (id === "d") figures = await resumeScenario(kit);
    else if (id === "e") figures = await repeatScenario(kit);
    else if (id === "f") figures = await strategiesScenario(kit);
    else if (id === "g") figures = await latencyScenario(kit);
    else if (id === "h") figures = await showScenario(kit);
    else if (id === "i") figures = await floorScenario(kit);
    else if (id === "j") figures = await applyRunsScenario(kit);
    else if (id === "k") figures = await startupScenario(kit);
    else if (id === "m") figures = await historyScaleScenario(kit);
    else if (id === "n") figures = await sinceLastScenario(kit);
    else if (id === "o") figures = await revertScaleScenario(kit);
    else if (id === "p") figures = await unknownReconcileScenario(kit);
    else if (id === "s") figures = await commandScaleScenario(kit);
    else figures = await scaleScenario(kit);
    emit({
      scenario: NAMES[id],
      status: "ok",
      at: new Date().toISOString(),
      elapsed_s: round((performance.now() - started) / 1000, 1),
      ...common,
      ...load,
      ...figures,
    });
  } catch (err) {
    if (interrupted) break;
    failed.push(NAMES[id]);
    log(`scenario ${NAMES[id]} FAILED: ${(err as Error).stack ?? String(err)}`);
    emit({
      scenario: NAMES[id],
      status: "failed",
      at: new Date().toISOString(),
      elapsed_s: round((performance.now() - started) / 1000, 1),
      ...common,
      ...load,
      error: (err as Error).message,
    });
  } finally {
    if (!interrupted) await scenarioCleanup.runAll(log);
  }
}

if (!interrupted) {
  await cleanup.runAll(log);
  log(failed.length === 0 ? "all scenarios completed" : `FAILED: ${failed.join(", ")}`);
  process.exit(failed.length === 0 ? 0 : 1);
}
