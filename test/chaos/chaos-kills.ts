/**
 * Phase 1 of the chaos suite: SIGKILL the apply process at seeded random points, counted in
 * creates the platform has committed, and resume the same run after each kill; the last resume
 * runs to completion.
 *
 * @example
 *   const r = await killAndResume(workload, { kills: 10, seed: 7, args, reportDir });
 *   r.killsSurvived; // 10
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { prng } from "../../src/contract/index.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
import { type CliResult, collect, runCli, spawnCli } from "../helpers/cli.ts";
import type { Workload } from "./chaos-workload.ts";

export interface KillOptions {
  readonly kills: number;
  readonly seed: number;
  /** CLI flags shared by every apply (database, rate, concurrency...). */
  readonly args: readonly string[];
  /** Where the final run writes its report folder. */
  readonly reportDir: string;
  /** Longest wait for one kill point before the phase is declared stuck. */
  readonly stepTimeoutMs: number;
  readonly log: (line: string) => void;
}

export interface KillResult {
  readonly runId: string;
  readonly killsSurvived: number;
  /** Committed creates at each kill, as the sandbox counted them. */
  readonly killedAt: readonly number[];
  readonly final: CliResult;
  readonly summary: RunSummary;
}

/**
 * `kills` points spread over the workload: one uniform draw inside each of `kills` equal slices of
 * [3%, 97%] of the expected creates, so the points are random (seeded) yet never bunched together.
 */
export function killPoints(expected: number, kills: number, seed: number): number[] {
  const rand = prng(seed ^ 0x6b11);
  const lo = expected * 0.03;
  const span = (expected * 0.94) / kills;
  return Array.from({ length: kills }, (_, i) => Math.max(1, Math.floor(lo + span * (i + rand()))));
}

async function waitFor(cond: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 2));
  }
  return true;
}

export async function killAndResume(w: Workload, opts: KillOptions): Promise<KillResult> {
  const creates = () => w.sandbox.stats().writes.creates;
  const points = killPoints(w.expectedClient.length, opts.kills, opts.seed);
  let runId: string | undefined;
  const killedAt: number[] = [];
  for (const point of points) {
    const resume = runId ? ["--resume", runId] : [];
    // A resume must make progress before it is killed again, even if the last kill overshot.
    const goal = Math.max(point, creates() + 1);
    opts.log(`apply ${resume.join(" ") || "(new run)"}: SIGKILL at ${goal} creates`);
    const child = spawnCli(["apply", ...resume, "--yes", ...opts.args], w.env);
    const done = collect(child);
    const reached = await waitFor(
      () => creates() >= goal || child.exitCode !== null || child.signalCode !== null,
      opts.stepTimeoutMs,
    );
    child.kill("SIGKILL");
    const r = await done;
    mkdirSync(opts.reportDir, { recursive: true });
    writeFileSync(join(opts.reportDir, `killed-${killedAt.length + 1}.log`), r.stderr);
    if (r.signal !== "SIGKILL") {
      throw new Error(
        `apply ended by itself (exit ${r.code}) before kill point ${goal}; stderr:\n${r.stderr}`,
      );
    }
    if (!reached) throw new Error(`no progress to ${goal} creates within ${opts.stepTimeoutMs} ms`);
    runId ??= /Run (\S+) \(apply\) started/.exec(r.stderr)?.[1];
    if (!runId) throw new Error(`no run id in the first apply's log:\n${r.stderr}`);
    killedAt.push(creates());
    opts.log(
      `kill ${killedAt.length}/${points.length} at ${killedAt.at(-1)} creates (run ${runId})`,
    );
  }
  if (!runId) throw new Error("no kill happened");
  opts.log(`apply --resume ${runId}: to completion`);
  const final = await runCli(
    ["apply", "--resume", runId, "--yes", "--json", "--out", opts.reportDir, ...opts.args],
    w.env,
  );
  writeFileSync(join(opts.reportDir, "final.log"), final.stderr);
  if (final.code !== 0) {
    throw new Error(`the last resume exited ${final.code}; stderr:\n${final.stderr}`);
  }
  return {
    runId,
    killsSurvived: killedAt.length,
    killedAt,
    final,
    summary: JSON.parse(final.stdout) as RunSummary,
  };
}
