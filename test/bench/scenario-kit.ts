/**
 * What every benchmark scenario shares: the settings of this bench run, a cleanup list that the
 * runner drains even on failure or Ctrl-C, the tool started as a separate process with its peak RSS
 * sampled from /proc, the sandbox started through its CLI, and small number helpers.
 *
 * @example
 *   const sandbox = await startBenchSandbox(kit, ["--identities", "1000"]);
 *   const run = await runTool(kit, ["plan", "--json", ...target.args], sandbox.env);
 *   console.log(run.wallS, run.peakRssMb, run.summary?.requests);
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SandboxStats } from "controls-sandbox";
import { type SandboxInfo, spawnSandbox } from "controls-sandbox/test-helpers";
import { syntheticIdentities } from "../../src/contract/index.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
import { collect, REPO_ROOT } from "../helpers/cli.ts";
import type { Cleanup } from "./scenario-cleanup.ts";

export type BackendName = "postgres" | "pglite";

export interface PostgresServer {
  /** Superuser URL on 127.0.0.1, used only to create and drop databases. */
  readonly adminUrl: string;
  readonly version: string;
  readonly origin: "BENCH_DATABASE_URL" | "TEST_DATABASE_URL" | "started by the bench";
}

export interface BenchKit {
  /** Small sizes and short timings: a smoke test that each scenario completes. */
  readonly quick: boolean;
  /** Source sizes of the plan scenario, smallest first. */
  readonly sizes: readonly number[];
  /** True when --sizes was given: scenarios with sizes of their own use `sizes` instead. */
  readonly sizesGiven?: boolean;
  /** Backends to run on; PostgreSQL only when `postgres` is set. */
  readonly backends: readonly BackendName[];
  readonly postgres: PostgresServer | null;
  /** `sources`: `node src/cli.ts`; `dist`: `node dist/src/bin.js` (after npm run build). */
  readonly runner: "sources" | "dist";
  readonly cleanup: Cleanup;
  /** Progress for people, on stderr; stdout carries only the figures. */
  readonly log: (message: string) => void;
}

export interface ToolRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** From spawn to exit, as the parent saw it (process start-up included). */
  readonly wallS: number;
  /** Highest VmHWM read from /proc/<pid>/status while the process ran; null off Linux. */
  readonly peakRssMb: number | null;
  /** Seconds from spawn to the first sample that saw the final VmHWM: which phase set the peak. */
  readonly peakRssAtS: number | null;
  /** [seconds from spawn, VmRSS MB] every 5 s: how resident memory moved over the run. */
  readonly rssTimeline: readonly (readonly [number, number])[];
  /** The `--json` summary, when the run printed one. */
  readonly summary: RunSummary | null;
  /** Epoch ms of spawn, to line up with the tool's log timestamps. */
  readonly spawnedAt: number;
}

export interface StartedTool {
  readonly child: ChildProcess;
  readonly done: Promise<ToolRun>;
}

const RSS_POLL_MS = 50;

const RSS_TIMELINE_MS = 5000;

/** VmHWM and VmRSS of `pid`, in kB; undefined once it exited, or off Linux. */
function memoryKb(pid: number): { hwm: number; rss: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const hwm = /^VmHWM:\s+(\d+) kB/m.exec(status);
    const rss = /^VmRSS:\s+(\d+) kB/m.exec(status);
    return hwm && rss ? { hwm: Number(hwm[1]), rss: Number(rss[1]) } : undefined;
  } catch {
    return undefined;
  }
}

/** Absolute paths: the tool runs in a folder of its own, not in the checkout. */
function toolArgv(kit: BenchKit, args: readonly string[]): string[] {
  return kit.runner === "dist"
    ? [join(REPO_ROOT, "dist/src/bin.js"), ...args]
    : [join(REPO_ROOT, "src/cli.ts"), ...args];
}

/**
 * Starts `controls-migrate <args>` as a child process (stdin closed, so no TTY) and samples its
 * VmHWM every 50 ms. VmHWM is the kernel's own high-water mark, so polling it misses at most the
 * growth of the last 50 ms before exit. Killed with SIGKILL after `timeoutMs`.
 */
export function startTool(
  kit: BenchKit,
  args: readonly string[],
  env: Record<string, string>,
  timeoutMs: number,
): StartedTool {
  const spawnedAt = Date.now();
  const t0 = performance.now();
  // A run given no --out writes its reports under the working folder (reports/<run-id>/): this
  // temporary one, removed when the run ends, so a bench run leaves nothing in the checkout.
  const cwd = mkdtempSync(join(tmpdir(), "cm-bench-tool-"));
  const child = spawn(process.execPath, toolArgv(kit, args), {
    cwd,
    env: { ...process.env, CONTROLS_LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const pid = child.pid ?? 0;
  let peakKb: number | undefined;
  let peakAtMs: number | undefined;
  let nextTimelineMs = 0;
  const rssTimeline: [number, number][] = [];
  const sample = () => {
    const kb = memoryKb(pid);
    if (kb === undefined) return;
    const ms = performance.now() - t0;
    if (peakKb === undefined || kb.hwm > peakKb) [peakKb, peakAtMs] = [kb.hwm, ms];
    if (ms >= nextTimelineMs) {
      rssTimeline.push([Math.round(ms / 1000), Math.round(kb.rss / 1024)]);
      nextTimelineMs += RSS_TIMELINE_MS;
    }
  };
  sample();
  const poll = setInterval(sample, RSS_POLL_MS);
  const forget = kit.cleanup.add(`kill tool pid ${pid}`, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  const timer = setTimeout(() => {
    kit.log(`tool ${args[0]} still running after ${timeoutMs / 1000} s: killing it`);
    child.kill("SIGKILL");
  }, timeoutMs);
  const done = collect(child).then((r) => {
    clearInterval(poll);
    clearTimeout(timer);
    rmSync(cwd, { recursive: true, force: true });
    void forget();
    const wallS = (performance.now() - t0) / 1000;
    return {
      ...r,
      wallS,
      peakRssMb: peakKb === undefined ? null : Math.round(peakKb / 1024),
      peakRssAtS: peakAtMs === undefined ? null : Math.round(peakAtMs / 100) / 10,
      rssTimeline,
      summary: lastJsonLine(r.stdout) as RunSummary | null,
      spawnedAt,
    };
  });
  return { child, done };
}

/** Runs the tool to completion; see {@link startTool}. */
export function runTool(
  kit: BenchKit,
  args: readonly string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<ToolRun> {
  return startTool(kit, args, env, timeoutMs).done;
}

/** Throws with the end of stderr unless the run exited with one of `codes`. */
export function expectExit(run: ToolRun, codes: readonly number[], what: string): void {
  if (run.code !== null && codes.includes(run.code)) return;
  const tail = run.stderr.trim().split("\n").slice(-15).join("\n");
  throw new Error(
    `${what} exited with ${run.code ?? run.signal} (expected ${codes.join(" or ")}):\n${tail}`,
  );
}

function lastJsonLine(stdout: string): unknown {
  const lines = stdout.trim().split("\n").reverse();
  for (const line of lines) {
    if (!line.startsWith("{")) continue;
    try {
      return JSON.parse(line);
    } catch {
      // not the summary
    }
  }
  return null;
}

export interface BenchSandbox {
  readonly info: SandboxInfo;
  readonly pid: number;
  /** What the tool needs to reach this sandbox (the secret travels by env, never on a command line). */
  readonly env: Record<string, string>;
  stats(): Promise<SandboxStats>;
  stop(): Promise<void>;
}

/** Starts `controls-sandbox --port 0 <args>` (the workspace package's bin) as a separate process; stopped by cleanup too. */
export async function startBenchSandbox(
  kit: BenchKit,
  args: readonly string[],
  readyTimeoutMs = 300_000,
): Promise<BenchSandbox> {
  const t0 = performance.now();
  const proc = await spawnSandbox(["--port", "0", ...args], readyTimeoutMs);
  const stop = kit.cleanup.add(`stop sandbox pid ${proc.child.pid}`, async () => {
    await proc.stop("SIGTERM");
  });
  kit.log(`sandbox ${args.join(" ")} ready in ${round((performance.now() - t0) / 1000, 1)} s`);
  const { info } = proc;
  return {
    info,
    pid: proc.child.pid ?? 0,
    env: {
      API_BASE_URL: info.api_url,
      OAUTH_TOKEN_URL: info.token_url,
      OAUTH_CLIENT_ID: info.client_id,
      OAUTH_CLIENT_SECRET: info.client_secret,
      // The figures are of the tool's creates: no waiting for the platform's own migration.
      CONTROLS_WAIT_FOR_PLATFORM: "false",
    },
    stats: async () => {
      const res = await fetch(`${info.admin_url}/stats`);
      if (!res.ok) throw new Error(`sandbox stats answered ${res.status}`);
      return (await res.json()) as SandboxStats;
    },
    stop,
  };
}

/** A bearer token with every scope of the read-write client, fetched with plain fetch. */
export async function rawToken(info: SandboxInfo): Promise<string> {
  const res = await fetch(info.token_url, {
    method: "POST",
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: info.client_id,
      client_secret: info.client_secret,
    }),
  });
  if (!res.ok) throw new Error(`the sandbox refused a token: ${res.status}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** Sum of per-status counts of one "METHOD /route" in sandbox stats. */
export function routeCount(stats: SandboxStats, route: string): number {
  return Object.values(stats.requests[route] ?? {}).reduce((a, b) => a + b, 0);
}

/** Writes at the pace of a sandbox without rate limits: the tool's own cost, not a budget's. */
export const UNLIMITED_WRITES: readonly string[] = Object.freeze([
  "--rate",
  "2000",
  "--allow-rate-above-limit",
  "--concurrency",
  "64",
]);

export const round = (n: number, digits = 2): number => {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
};

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `cond` every `everyMs` until it holds; throws after `timeoutMs`. */
export async function waitUntil(
  cond: () => Promise<boolean>,
  what: string,
  timeoutMs: number,
  everyMs = 20,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end)
      throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** A figure that must be a finite number; a missing one fails the scenario. */
export function need(value: number | null | undefined, name: string): number {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new Error(`figure ${name} is missing (${String(value)})`);
  }
  return value;
}

/**
 * How many synthetic identities (generator prefix, same seed) hold exactly `userDisabled`
 * user_disabled ones, so a source seeded with that count yields exactly that many creates.
 *
 * @example
 *   identitiesHolding(10_000, 5); // ≈ 100,000
 */
export function identitiesHolding(userDisabled: number, seed: number): number {
  let n = 0;
  let found = 0;
  for (const row of syntheticIdentities(Number.MAX_SAFE_INTEGER, seed)) {
    n += 1;
    if (row.user_disabled) found += 1;
    if (found >= userDisabled) return n;
  }
  return n;
}

/** The ids of identities number `from` (0-based) onwards whose user_disabled is true. */
export function userDisabledIds(seed: number, from: number, total: number): string[] {
  const ids: string[] = [];
  let i = 0;
  for (const row of syntheticIdentities(total, seed)) {
    if (i++ >= from && row.user_disabled) ids.push(row.id);
  }
  return ids;
}
export { REPO_ROOT };
