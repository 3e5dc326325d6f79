/**
 * `npm run chaos`: fault injection against the real CLI, bounded in time and count, loopback only.
 *
 *   npm run chaos                                    # full: 10 kills over ~5,000 creates, then a fault mix over ~5,000 more
 *   npm run chaos -- --quick                         # CI: ~600 creates and 3 kills, ~300 creates under faults
 *   npm run chaos -- --database-url postgres://postgres@127.0.0.1:5432/postgres   # on PostgreSQL
 *
 * Phase 1 SIGKILLs `apply` at seeded random points (counted in creates the sandbox committed) and
 * resumes the same run after each kill. Phase 2 runs a fresh apply with 10% 5xx, 5% hangs (the
 * tool's --timeout-ms 2000), 3% ambiguous writes, tokens revoked on a timer and one 429 burst,
 * re-running until the tool reports done. Phase 3 takes the database away under an apply, on a
 * PostgreSQL cluster the suite starts itself: all the tool's sessions killed three times during one
 * apply, a server restart during another; each must end with exit 0 by itself. After each phase the sandbox, the journal and the last
 * summary.json are checked against each other. Prints ONE JSON line of figures on stdout, appends
 * it to bench-results/chaos.jsonl, and exits 1 on any duplicate or missing control, non-final
 * journal action, report mismatch, apply exit other than 0 or 3, or unfinished run. Progress goes
 * to stderr.
 *
 * PostgreSQL: --database-url or env TEST_DATABASE_URL is an admin URL; a throwaway database is
 * created on that server and dropped afterwards. Without one, embedded PGlite is used.
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { REPO_ROOT } from "../helpers/cli.ts";
import { clusterUnavailable } from "../helpers/pg-cluster.ts";
import { databaseFaults } from "./chaos-database.ts";
import { applyUnderFaults } from "./chaos-faults.ts";
import { killAndResume } from "./chaos-kills.ts";
import { type Verdict, verdictOf } from "./chaos-verdict.ts";
import { startWorkload } from "./chaos-workload.ts";

const USAGE = `Usage: npm run chaos -- [--quick] [--seed N] [--database-url ADMIN_URL] [--backend pglite|postgres]
  --quick         small sizes for CI (about 2 minutes)
  --seed          seed of the identities, kill points and fault draws (default 1)
  --database-url  PostgreSQL admin URL (or env TEST_DATABASE_URL): a throwaway database is used
  --backend       pglite or postgres (default: postgres when a URL is known, else pglite)`;

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    seed: { type: "string", default: "1" },
    "database-url": { type: "string" },
    backend: { type: "string" },
    help: { type: "boolean", default: false },
  },
  strict: true,
});
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const seed = Number(values.seed);
if (!Number.isInteger(seed)) throw new Error(`--seed must be an integer, got ${values.seed}`);
// The shared test helper picks its PostgreSQL admin URL from this variable when it loads.
if (values["database-url"]) process.env.TEST_DATABASE_URL = values["database-url"];
const { backends } = await import("../helpers/db.ts");
const backendName =
  values.backend ?? (backends.some((b) => b.name === "postgres") ? "postgres" : "pglite");
const backend = backends.find((b) => b.name === backendName);
if (!backend) {
  process.stderr.write(`chaos: backend ${backendName} needs --database-url\n${USAGE}\n`);
  process.exit(1);
}

const SIZES = values.quick
  ? {
      killIdentities: 6_000,
      kills: 3,
      faultIdentities: 3_000,
      revokeEveryMs: 5_000,
      dbCreates: 1_000,
    }
  : {
      killIdentities: 50_000,
      kills: 10,
      faultIdentities: 50_000,
      revokeEveryMs: 10_000,
      dbCreates: 2_000,
    };
/** Whole-suite bound: a hung phase must not hang CI. */
const DEADLINE_MS = values.quick ? 170_000 : 1_500_000;

const started = performance.now();
const secondsSince = (t: number) => Math.round((performance.now() - t) / 100) / 10;
const log = (line: string) =>
  process.stderr.write(`chaos [${secondsSince(started).toFixed(1)} s]: ${line}\n`);
const reportRoot = mkdtempSync(join(tmpdir(), "cm-chaos-"));
const deadline = setTimeout(() => {
  log(`over the ${DEADLINE_MS / 1000} s bound; reports kept in ${reportRoot}`);
  process.exit(1);
}, DEADLINE_MS);
deadline.unref();

/** Tool flags shared by every run: fast enough to stay bounded, same client code paths. */
const TOOL_ARGS = [
  "--no-progress",
  "--rate",
  "200",
  "--allow-rate-above-limit",
  "--concurrency",
  "8",
];
const RETRY_ARGS = ["--retry-base-ms", "50", "--retry-cap-ms", "1000"];

const verdictFigures = (v: Verdict) => ({
  duplicates: v.duplicates,
  missing: v.missing,
  stray: v.stray,
  non_final_actions: v.nonFinalActions,
  journal_creates: v.journalCreates,
  report_mismatches: v.reportMismatches,
});

async function killPhase() {
  const t = performance.now();
  const w = await startWorkload(backend!, { identities: SIZES.killIdentities, seed });
  try {
    log(
      `phase 1: ${w.expectedClient.length} creates to do, ${SIZES.kills} kills (${backend!.name})`,
    );
    const r = await killAndResume(w, {
      kills: SIZES.kills,
      seed,
      args: [...TOOL_ARGS, ...RETRY_ARGS, ...w.target.args],
      reportDir: join(reportRoot, "kills"),
      stepTimeoutMs: 120_000,
      log,
    });
    const v = await verdictOf(w, r.summary);
    return {
      verdict: v,
      figures: {
        identities: w.identities,
        expected_creates: w.expectedClient.length,
        kills_survived: r.killsSurvived,
        killed_at_creates: r.killedAt,
        outcomes: r.summary.outcomes,
        sandbox_creates: w.sandbox.stats().writes.creates,
        wall_s: secondsSince(t),
        ...verdictFigures(v),
      },
    };
  } finally {
    await w.close();
  }
}

async function faultPhase() {
  const t = performance.now();
  const w = await startWorkload(backend!, {
    identities: SIZES.faultIdentities,
    seed: seed + 1,
    sandbox: {
      failRate: 0.1,
      hangRate: 0.05,
      ambiguousRate: 0.03,
      rateWindowS: 1,
      penaltyS: 2,
    },
  });
  try {
    log(`phase 2: ${w.expectedClient.length} creates under 10% 5xx, 5% hangs, 3% ambiguous`);
    const r = await applyUnderFaults(w, {
      args: [
        ...TOOL_ARGS,
        ...RETRY_ARGS,
        "--timeout-ms",
        "2000",
        "--penalty-s",
        "2",
        ...w.target.args,
      ],
      reportDir: join(reportRoot, "faults"),
      maxRuns: 6,
      revokeEveryMs: SIZES.revokeEveryMs,
      burstAtFraction: 0.3,
      burstRps: 5,
      burstHoldMs: 2_500,
      log,
    });
    const s = w.sandbox.stats();
    const v = await verdictOf(w, r.summary);
    const sum = (m: Record<string, number>) => Object.values(m).reduce((a, b) => a + b, 0);
    return {
      verdict: v,
      figures: {
        identities: w.identities,
        expected_creates: w.expectedClient.length,
        apply_exit_codes: r.exitCodes,
        apply_outcomes: r.outcomes,
        injected: {
          fail_5xx: s.faults.fail5xx,
          hang: s.faults.hang,
          ambiguous: s.faults.ambiguous,
          token_revocations: s.faults.revocations,
          rate_limited_429: sum(s.rateLimited),
          burst_at_creates: r.burst.startedAtCreates,
        },
        sandbox_creates: s.writes.creates,
        wall_s: secondsSince(t),
        ...verdictFigures(v),
      },
    };
  } finally {
    await w.close();
  }
}

async function databasePhase() {
  const t = performance.now();
  const r = await databaseFaults({
    creates: SIZES.dbCreates,
    seed,
    args: [...TOOL_ARGS, ...RETRY_ARGS],
    reportDir: join(reportRoot, "database"),
    log,
  });
  return {
    verdicts: r.verdicts,
    figures: {
      terminate: { ...r.terminate, ...verdictFigures(r.verdicts[0]!) },
      restart: { ...r.restart, ...verdictFigures(r.verdicts[1]!) },
      wall_s: secondsSince(t),
    },
  };
}

const line: Record<string, unknown> = {
  suite: "chaos",
  quick: values.quick,
  backend: backend.name,
  seed,
  at: new Date().toISOString(),
};
let ok = false;
try {
  const kills = await killPhase();
  line.kills = kills.figures;
  const faults = await faultPhase();
  line.faults = faults.figures;
  const verdicts = [kills.verdict, faults.verdict];
  // The database phase needs a cluster of its own; where none can start it says why and is skipped.
  const noCluster = clusterUnavailable();
  let stackTraces = 0;
  if (noCluster) {
    line.database = { skipped: noCluster };
    log(`phase 3 skipped: ${noCluster}`);
  } else {
    const db = await databasePhase();
    line.database = db.figures;
    verdicts.push(...db.verdicts);
    stackTraces = db.figures.terminate.stack_traces + db.figures.restart.stack_traces;
  }
  const total = (k: "duplicates" | "missing" | "stray" | "nonFinalActions") =>
    verdicts.reduce((n, v) => n + v[k], 0);
  Object.assign(line, {
    kills_survived: kills.figures.kills_survived,
    duplicates: total("duplicates"),
    missing: total("missing"),
    stray: total("stray"),
    non_final_actions: total("nonFinalActions"),
    report_mismatches: verdicts.reduce((n, v) => n + v.reportMismatches.length, 0),
    // Under the fault mix the tool may stop with 3 (some actions failed, a re-run retries them);
    // any other non-zero exit means it did not cope.
    apply_failures: faults.figures.apply_exit_codes.filter((c) => c !== 0 && c !== 3).length,
    stack_traces: stackTraces,
  });
  ok =
    total("duplicates") === 0 &&
    total("missing") === 0 &&
    total("stray") === 0 &&
    total("nonFinalActions") === 0 &&
    line.apply_failures === 0 &&
    line.report_mismatches === 0 &&
    stackTraces === 0;
} catch (err) {
  line.error = (err as Error).message.slice(0, 2000);
  log(`failed: ${(err as Error).stack ?? err}`);
}
line.ok = ok;
line.wall_s = secondsSince(started);
const json = JSON.stringify(line);
process.stdout.write(`${json}\n`);
mkdirSync(join(REPO_ROOT, "bench-results"), { recursive: true });
appendFileSync(join(REPO_ROOT, "bench-results", "chaos.jsonl"), `${json}\n`);
if (ok) rmSync(reportRoot, { recursive: true, force: true });
else log(`FAILED; reports kept in ${reportRoot}`);
clearTimeout(deadline);
process.exit(ok ? 0 : 1);
