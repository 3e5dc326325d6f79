/**
 * Scenario a — plan at scale. For each size, one sandbox process holds N identities (half the
 * flagged ones already migrated, faults off, rate limit off); for each backend a fresh database is
 * seeded with the same N identities and `plan --state bulk --json` runs as a separate process with
 * the tool's default budget (40 rps, concurrency 8). Figures: wall time, identities/s, peak RSS
 * (VmHWM), read requests as counted by the tool and by the sandbox, and a phase breakdown from the
 * tool's own log timestamps.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type BenchKit,
  type BenchSandbox,
  expectExit,
  need,
  round,
  runTool,
  startBenchSandbox,
  type ToolRun,
} from "./scenario-kit.ts";
import { type BackendName, openTarget, type SeedFigures, seedTarget } from "./scenario-postgres.ts";

const SEED = 5;

export interface PlanRunFigures {
  readonly backend: BackendName;
  readonly state: string;
  readonly identities: number;
  readonly seed: SeedFigures;
  readonly wall_s: number;
  readonly tool_duration_s: number;
  readonly identities_per_s: number;
  readonly peak_rss_mb: number;
  /** Seconds from spawn to the sample that first saw the peak, and VmRSS every 5 s. */
  readonly peak_rss_at_s: number | null;
  readonly rss_timeline: readonly (readonly [number, number])[];
  readonly read_requests: number;
  readonly read_requests_by_endpoint: Record<string, number>;
  /** Requests the tool sent to GET /v2/identity/identities (retries included). */
  readonly listing_requests: number;
  /** What the listing recorded in summary.json (pages, identities, SELL_ONLY holders, windows). */
  readonly listing: Record<string, unknown> | null;
  readonly sandbox_read_requests: number;
  readonly rate_limited: number;
  readonly exit_code: number;
  readonly missing_client_control: number;
  readonly phases_s: Record<string, number | null>;
  readonly held?: Record<string, number>;
  readonly targets?: Record<string, boolean>;
}

interface LogLine {
  readonly at: number;
  readonly message: string;
}

function logLines(stderr: string): LogLine[] {
  const out: LogLine[] = [];
  for (const line of stderr.split("\n")) {
    const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z) \w+\s+(.*)$/.exec(line);
    if (m) out.push({ at: Date.parse(m[1] as string), message: m[2] as string });
  }
  return out;
}

/**
 * Where the time went, from the tool's log: process start-up (loading, connect, migrations), the
 * choice of strategy, the platform listing (the source pass and the findings run beside it), then
 * everything after the listing (the candidates no page listed, the report), then exit. With
 * `--log-level debug` also when the source pass ended and the findings were complete.
 */
export function planPhases(run: ToolRun): Record<string, number | null> {
  const lines = logLines(run.stderr);
  const first = (re: RegExp) => lines.find((l) => re.test(l.message))?.at;
  const last = (re: RegExp) => lines.filter((l) => re.test(l.message)).at(-1)?.at;
  const started = first(/^Run \S+ \(\w+\) started/);
  const reading = first(/^Reading platform state/);
  const listed = last(/^platform: /);
  const finished = run.summary ? Date.parse(run.summary.finished_at) : undefined;
  const exited = run.spawnedAt + run.wallS * 1000;
  const span = (a?: number, b?: number) =>
    a === undefined || b === undefined ? null : round((b - a) / 1000, 1);
  // With --log-level debug: the end of the source pass (beside the listing) and of the findings.
  const sourceDone = first(/^source: \d+ rows read/);
  const findingsDone = first(/^findings: \d+ identities classified/);
  return {
    startup: span(run.spawnedAt, started),
    source: span(started, reading),
    platform_listing: span(reading, listed),
    after_listing: span(listed, finished),
    exit: span(finished, exited),
    ...(sourceDone === undefined ? {} : { source_pass_beside_listing: span(reading, sourceDone) }),
    ...(findingsDone === undefined
      ? {}
      : {
          after_listing_findings: span(listed, findingsDone),
          after_listing_report: span(findingsDone, finished),
        }),
  };
}

const isRead = (route: string) => route.startsWith("GET ");

/**
 * With `--log-level debug`: what the findings stream held in memory, and put aside in the
 * database, while the source pass ran beside the listing.
 */
function heldPages(run: ToolRun): { held: Record<string, number> } | Record<string, never> {
  const m =
    /findings: (\d+) listed pages held in memory \(([\d.]+) MB\), (\d+) listed identities put aside/.exec(
      run.stderr,
    );
  if (!m) return {};
  const index = /the source index holds (\d+) ids in ([\d.]+) MB/.exec(run.stderr);
  return {
    held: {
      pages: Number(m[1]),
      mb: Number(m[2]),
      put_aside: Number(m[3]),
      ...(index ? { index_ids: Number(index[1]), index_mb: Number(index[2]) } : {}),
    },
  };
}

/**
 * One plan of `identities` source rows on a freshly seeded database, with `--state state` and any
 * `extraArgs` (`--rate 1000 --allow-rate-above-limit`).
 */
export async function planOnce(
  kit: BenchKit,
  sandbox: BenchSandbox,
  backend: BackendName,
  identities: number,
  state: "bulk" | "filtered" = "bulk",
  extraArgs: readonly string[] = [],
): Promise<PlanRunFigures> {
  const target = await openTarget(kit.cleanup, kit.postgres, backend);
  const out = mkdtempSync(join(tmpdir(), "cm-bench-report-"));
  const removeOut = kit.cleanup.add(`remove ${out}`, () =>
    rmSync(out, { recursive: true, force: true }),
  );
  try {
    const seed = await seedTarget(kit, target, identities, SEED);
    const before = await sandbox.stats();
    kit.log(
      `plan --state ${state} ${extraArgs.join(" ")} of ${identities} identities on ${backend}...`,
    );
    const run = await runTool(
      kit,
      ["plan", "--state", state, "--json", "--out", out, ...extraArgs, ...target.args],
      sandbox.env,
      20 * 60_000,
    );
    expectExit(run, [0, 2], `plan of ${identities} on ${backend}`);
    const after = await sandbox.stats();
    const s = run.summary;
    if (s?.status !== "completed" || s.source.rows_read !== identities) {
      throw new Error(
        `plan on ${backend} did not read all ${identities} rows: ${JSON.stringify(s?.source)}`,
      );
    }
    const byEndpoint = Object.fromEntries(
      Object.entries(s.requests)
        .filter(([k]) => isRead(k))
        .map(([k, v]) => [k, v.count]),
    );
    const sandboxReads = Object.keys(after.requests)
      .filter((k) => isRead(k) && k.includes("/v2/"))
      .reduce((n, k) => {
        const count = (x: typeof after) =>
          Object.values(x.requests[k] ?? {}).reduce((a, b) => a + b, 0);
        return n + count(after) - count(before);
      }, 0);
    const wall = need(run.wallS, "wall_s");
    const rss = need(run.peakRssMb, "peak_rss_mb");
    const reads = need(
      Object.values(byEndpoint).reduce((a, b) => a + b, 0),
      "read_requests",
    );
    const figures: PlanRunFigures = {
      backend,
      state,
      identities,
      seed,
      wall_s: round(wall, 1),
      tool_duration_s: need(s.duration_s, "tool_duration_s"),
      identities_per_s: Math.round(identities / wall),
      peak_rss_mb: rss,
      peak_rss_at_s: run.peakRssAtS,
      rss_timeline: run.rssTimeline,
      read_requests: reads,
      read_requests_by_endpoint: byEndpoint,
      listing_requests: s.requests["GET /v2/identity/identities"]?.count ?? 0,
      listing: (s.platform_state?.listing as Record<string, unknown> | null | undefined) ?? null,
      sandbox_read_requests: sandboxReads,
      rate_limited: Object.values(s.requests).reduce((n, v) => n + v.rate_limited, 0),
      exit_code: run.code ?? -1,
      missing_client_control: s.findings.missing_client_control ?? 0,
      phases_s: planPhases(run),
      ...heldPages(run),
      ...(identities === 1_000_000 && state === "bulk" && backend === "pglite"
        ? { targets: { wall_le_35_s: wall <= 35, peak_rss_le_400_mb: rss <= 400 } }
        : {}),
      ...(identities === 1_000_000 && state === "bulk" && backend !== "pglite"
        ? {
            targets: {
              wall_le_60_s: wall <= 60,
              peak_rss_le_300_mb: rss <= 300,
              reads_le_1010: reads <= 1010,
            },
          }
        : {}),
    };
    kit.log(`  ${JSON.stringify(figures)}`);
    return figures;
  } finally {
    await removeOut();
    await target.drop();
  }
}

/** The plan scenarios' sandbox: N identities, half the flagged ones migrated, limits off. */
export function planSandbox(
  kit: BenchKit,
  identities: number,
  extra: readonly string[] = [],
  readyTimeoutMs?: number,
): Promise<BenchSandbox> {
  return startBenchSandbox(
    kit,
    [
      "--identities",
      String(identities),
      "--seed",
      String(SEED),
      "--migrated-fraction",
      "0.5",
      "--rate-limit",
      "0",
      "--token-rate-limit",
      "0",
      ...extra,
    ],
    readyTimeoutMs,
  );
}

/** Every (size, backend) plan run, sizes ascending; one sandbox process per size. */
export async function planRuns(
  kit: BenchKit,
  sizes: readonly number[],
  backends: readonly BackendName[],
): Promise<PlanRunFigures[]> {
  const runs: PlanRunFigures[] = [];
  for (const identities of sizes) {
    const sandbox = await planSandbox(kit, identities);
    try {
      for (const backend of backends) runs.push(await planOnce(kit, sandbox, backend, identities));
    } finally {
      await sandbox.stop();
    }
  }
  return runs;
}

/** Scenario a: its JSON figures. */
export async function planScenario(kit: BenchKit): Promise<Record<string, unknown>> {
  const runs = await planRuns(kit, kit.sizes, kit.backends);
  return {
    setup: {
      sandbox: "separate process (CLI), faults off, --rate-limit 0, migrated fraction 0.5",
      tool: `${kit.runner === "dist" ? "node dist/src/bin.js" : "node src/cli.ts"} plan --state bulk --json (default --rate 40, --concurrency 8)`,
      peak_rss: "VmHWM of the tool process, polled every 50 ms",
      seed: SEED,
    },
    runs,
  };
}
