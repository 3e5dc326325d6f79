/**
 * Phase 3 of the chaos suite: the database goes away under a running apply. On a PostgreSQL
 * cluster of the suite's own (never the shared server): every session of the tool is killed with
 * pg_terminate_backend three times during one apply, and the server is restarted (pg_ctl restart)
 * during another. Each apply must finish by itself with exit 0 and no stack trace; the verdict then
 * checks the platform, the journal and the report against each other.
 *
 * @example
 *   const r = await databaseFaults({ creates: 2000, seed: 1, args, reportDir, log });
 *   r.terminate.exit_code; // 0
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { GlobalConfig } from "../../src/config.ts";
import { openDatabase } from "../../src/db/connection/connect.ts";
import { migrateToLatest } from "../../src/db/connection/migrate.ts";
import { silentLogger } from "../../src/log.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
import { collect, spawnCli } from "../helpers/cli.ts";
import type { Backend } from "../helpers/db.ts";
import {
  type Cluster,
  databaseOf,
  startCluster,
  terminateBackends,
} from "../helpers/pg-cluster.ts";
import { type Verdict, verdictOf } from "./chaos-verdict.ts";
import { startWorkload, type Workload } from "./chaos-workload.ts";

export interface DatabaseFaultOptions {
  /** About how many creates each apply has to do (10% of the identities are user_disabled). */
  readonly creates: number;
  readonly seed: number;
  readonly args: readonly string[];
  readonly reportDir: string;
  readonly log: (line: string) => void;
}

export interface ApplyFigures {
  readonly exit_code: number | null;
  readonly expected_creates: number;
  readonly outcomes: Record<string, number>;
  readonly stack_traces: number;
  readonly connection_losses_logged: number;
  readonly wall_s: number;
}

export interface DatabaseFaultResult {
  readonly terminate: ApplyFigures & { readonly rounds: number; readonly sessions_killed: number };
  readonly restart: ApplyFigures & { readonly restart_s: number };
  readonly verdicts: readonly Verdict[];
}

const STACK_LINE = /^\s+at .+\(.+:\d+:\d+\)$/gm;

/** A chaos Backend whose databases live on the suite's own cluster. */
function clusterBackend(cluster: Cluster): Backend {
  return {
    name: "postgres",
    open: () => Promise.reject(new Error("in-process databases are not used by the chaos suite")),
    async target() {
      const url = await cluster.createDatabase();
      const global: GlobalConfig = Object.freeze({
        databaseUrl: url,
        dataDir: "",
        logLevel: "error",
        logFormat: "text",
        json: false,
        progress: false,
        dbRetryS: 60,
      });
      return {
        args: ["--database-url", url],
        global,
        async open(options) {
          const h = await openDatabase(global, silentLogger);
          if (options?.migrate) await migrateToLatest(h.db, silentLogger);
          return h;
        },
        drop: async () => {},
      };
    },
  };
}

async function untilCreates(w: Workload, n: number, child: { exitCode: number | null }) {
  const end = Date.now() + 300_000;
  while (w.sandbox.stats().writes.creates < n) {
    if (child.exitCode !== null) throw new Error(`apply ended before ${n} creates`);
    if (Date.now() > end) throw new Error(`no progress to ${n} creates within 300 s`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Runs one apply to its end while `fault` does its damage; returns the figures and the verdict. */
async function applyThrough(
  w: Workload,
  name: string,
  opts: DatabaseFaultOptions,
  fault: (child: { exitCode: number | null }) => Promise<void>,
): Promise<{ figures: ApplyFigures; verdict: Verdict }> {
  const t = performance.now();
  const out = join(opts.reportDir, name);
  const child = spawnCli(
    ["apply", "--yes", "--json", "--out", out, ...opts.args, ...w.target.args],
    w.env,
  );
  const done = collect(child);
  await fault(child);
  const r = await done;
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, "stderr.log"), r.stderr);
  if (r.code !== 0 || !r.stdout.trim()) {
    throw new Error(`${name}: apply exited ${r.code}; stderr:\n${r.stderr.slice(-4000)}`);
  }
  const summary = JSON.parse(r.stdout) as RunSummary;
  return {
    figures: {
      exit_code: r.code,
      expected_creates: w.expectedClient.length,
      outcomes: summary.outcomes,
      stack_traces: (r.stderr.match(STACK_LINE) ?? []).length,
      connection_losses_logged: (r.stderr.match(/Lost the database connection/g) ?? []).length,
      wall_s: Math.round((performance.now() - t) / 100) / 10,
    },
    verdict: await verdictOf(w, summary),
  };
}

export async function databaseFaults(opts: DatabaseFaultOptions): Promise<DatabaseFaultResult> {
  const cluster = await startCluster();
  try {
    const backend = clusterBackend(cluster);
    const identities = opts.creates * 10;

    const w1 = await startWorkload(backend, { identities, seed: opts.seed + 2 });
    let rounds = 0;
    let killed = 0;
    let terminate: { figures: ApplyFigures; verdict: Verdict };
    try {
      const url = w1.target.args[1]!;
      opts.log(`phase 3a: ${w1.expectedClient.length} creates, all sessions killed 3 times`);
      terminate = await applyThrough(w1, "terminate", opts, async (child) => {
        for (const fraction of [0.25, 0.5, 0.75]) {
          await untilCreates(w1, Math.floor(w1.expectedClient.length * fraction), child);
          const n = await terminateBackends(cluster.adminUrl, databaseOf(url));
          rounds += 1;
          killed += n;
          opts.log(
            `  pg_terminate_backend: ${n} sessions at ${w1.sandbox.stats().writes.creates} creates`,
          );
        }
      });
    } finally {
      await w1.close();
    }

    const w2 = await startWorkload(backend, { identities, seed: opts.seed + 3 });
    let restartS = 0;
    let restart: { figures: ApplyFigures; verdict: Verdict };
    try {
      opts.log(`phase 3b: ${w2.expectedClient.length} creates, PostgreSQL restarted halfway`);
      restart = await applyThrough(w2, "restart", opts, async (child) => {
        await untilCreates(w2, Math.floor(w2.expectedClient.length * 0.5), child);
        const t = performance.now();
        cluster.restart();
        restartS = Math.round((performance.now() - t) / 100) / 10;
        opts.log(
          `  pg_ctl restart took ${restartS} s, at ${w2.sandbox.stats().writes.creates} creates`,
        );
      });
    } finally {
      await w2.close();
    }
    return {
      terminate: { ...terminate.figures, rounds, sessions_killed: killed },
      restart: { ...restart.figures, restart_s: restartS },
      verdicts: [terminate.verdict, restart.verdict],
    };
  } finally {
    await cluster.destroy();
  }
}
