/**
 * Phase 2 of the chaos suite: a fresh apply under a fault mix (5xx, hangs, ambiguous writes, token
 * revocations on a timer, one 429 burst). The tool must finish: exit 0, or 3 then re-runs (or a
 * resume when it asks for one) until done, bounded in count.
 *
 * @example
 *   const r = await applyUnderFaults(workload, { args, maxRuns: 6, revokeEveryMs: 10_000, ... });
 *   r.runs; // [3, 0]: one re-run was needed
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RunSummary } from "../../src/reports/summary.ts";
import { type CliResult, runCli } from "../helpers/cli.ts";
import type { Workload } from "./chaos-workload.ts";

export interface FaultOptions {
  readonly args: readonly string[];
  readonly reportDir: string;
  /** Apply runs allowed before the phase is declared failed. */
  readonly maxRuns: number;
  readonly revokeEveryMs: number;
  /** The 429 burst starts once this fraction of the expected creates is committed. */
  readonly burstAtFraction: number;
  /** Requests/s the sandbox allows per endpoint during the burst (normally unlimited). */
  readonly burstRps: number;
  /** How long the low limit stays once the first 429 was answered. */
  readonly burstHoldMs: number;
  readonly log: (line: string) => void;
}

export interface FaultResult {
  /** Exit code of each apply run, in order. */
  readonly exitCodes: readonly number[];
  /** `status:outcome` counts of each apply run that printed a summary, in order. */
  readonly outcomes: readonly Record<string, number>[];
  readonly summary: RunSummary;
  readonly last: CliResult;
  readonly burst: { readonly startedAtCreates: number | null; readonly answered429: number };
}

const NOT_FINAL = /^(pending|in_flight|ambiguous)(:|$)/;
const total = (m: Record<string, number>) => Object.values(m).reduce((a, b) => a + b, 0);

export async function applyUnderFaults(w: Workload, opts: FaultOptions): Promise<FaultResult> {
  const { sandbox } = w;
  const revoker = setInterval(() => sandbox.revokeTokens(), opts.revokeEveryMs);
  const burst = { startedAtCreates: null as number | null, answered429: 0 };
  let phase: "waiting" | "limited" | "done" = "waiting";
  let limitedSince = 0;
  const burstAt = Math.floor(w.expectedClient.length * opts.burstAtFraction);
  // The burst is driven by what the sandbox sees, so it lands mid-write whatever the timing.
  const burster = setInterval(() => {
    const s = sandbox.stats();
    if (phase === "waiting" && s.writes.creates >= burstAt) {
      phase = "limited";
      burst.startedAtCreates = s.writes.creates;
      sandbox.setLimits({ rateLimitRps: opts.burstRps });
      opts.log(`429 burst: limit ${opts.burstRps} rps at ${s.writes.creates} creates`);
    } else if (phase === "limited") {
      if (limitedSince === 0 && total(s.rateLimited) > 0) limitedSince = Date.now();
      if (limitedSince > 0 && Date.now() - limitedSince >= opts.burstHoldMs) {
        phase = "done";
        sandbox.setLimits({ rateLimitRps: 0 });
        burst.answered429 = total(sandbox.stats().rateLimited);
        opts.log(`429 burst over: ${burst.answered429} answered 429`);
      }
    }
  }, 20);

  try {
    const exitCodes: number[] = [];
    const outcomes: Record<string, number>[] = [];
    const refused = new Set<string>();
    let resume: string | undefined;
    for (let run = 1; run <= opts.maxRuns; run++) {
      const out = join(opts.reportDir, `run-${run}`);
      const how = resume ? ["--resume", resume] : [];
      const r = await runCli(
        ["apply", ...how, "--yes", "--json", "--out", out, ...opts.args],
        w.env,
      );
      exitCodes.push(r.code ?? -1);
      // Kept with the reports for a post-mortem (the folder is removed when the suite passes).
      mkdirSync(out, { recursive: true });
      writeFileSync(join(out, "stderr.log"), r.stderr);
      const summary = r.stdout.trim() ? (JSON.parse(r.stdout) as RunSummary) : undefined;
      if (summary) outcomes.push(summary.outcomes);
      opts.log(
        `apply run ${run}${resume ? ` (resume ${resume})` : ""} exited ${r.code}: ${JSON.stringify(summary?.outcomes ?? {})}`,
      );
      if (r.code === 0 && summary) {
        if (phase === "waiting") throw new Error("the apply finished before the 429 burst began");
        return { exitCodes, outcomes, summary, last: r, burst };
      }
      if (r.code === 3 && summary) {
        // Actions left in doubt belong to this run: resuming it is how the README says they are
        // settled. Otherwise (only failures) a fresh apply retries them.
        const inDoubt = Object.keys(summary.outcomes).some((k) => NOT_FINAL.test(k));
        resume = inDoubt && !refused.has(summary.run_id) ? summary.run_id : undefined;
      } else if (r.code === 1) {
        opts.log(`  refused or failed: ${r.stderr.trim().split("\n").slice(-2).join(" | ")}`);
        if (resume) refused.add(resume);
        // When the tool refuses to start because a run is unfinished, it names the run to resume.
        const named = /--resume (\d{8}-\d{6}-[0-9a-f]+)/.exec(r.stderr)?.[1];
        resume = named && !refused.has(named) ? named : undefined;
      } else {
        throw new Error(`apply exited ${r.code}; stderr:\n${r.stderr.slice(-4000)}`);
      }
    }
    throw new Error(`apply did not finish in ${opts.maxRuns} runs: exit codes ${exitCodes}`);
  } finally {
    clearInterval(revoker);
    clearInterval(burster);
  }
}
