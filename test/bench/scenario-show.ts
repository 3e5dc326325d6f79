/**
 * Scenario h: `controls-migrate show` on a database holding 20 runs of N identities (1,000,000 by
 * default), and the report.html of one such run. The runs are made with bulk SQL
 * (generate_series), not 20 real plans: per run every identity is in the bulk snapshot, 1 in 8 has
 * a flag (source row and finding), 1 in 16 an observed SELL_ONLY, and an apply or reconcile
 * journals an action for 1 in 40. PostgreSQL only.
 *
 * @example
 *   npm run bench -- --only h --backends postgres            # 20 runs × 1,000,000 identities
 *   npm run bench -- --only h --sizes 100000 --backends postgres
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { createPgPool, wrapPgPool } from "../../src/db/connection/connect.ts";
import { migrateToLatest } from "../../src/db/connection/migrate.ts";
import { identityHistoryPage } from "../../src/db/report-queries/history-queries.ts";
import { silentLogger } from "../../src/log.ts";
import { writeRunReport } from "../../src/migration/run/report.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
import { type BenchKit, round } from "./scenario-kit.ts";
import { openTarget } from "./scenario-postgres.ts";

const RUNS = 20;
const MODES = ["plan", "apply", "reconcile"] as const;
/** A UUID-shaped id for integer g, the same in every run. */
const ID = (g: string) =>
  `(substr(md5(${g}::text), 1, 8) || '-' || substr(md5(${g}::text), 9, 4) || '-4' || substr(md5(${g}::text), 14, 3) || '-8' || substr(md5(${g}::text), 18, 3) || '-' || substr(md5(${g}::text), 21, 12))`;

const percentile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] ?? 0;
};

/** Fills the tool's tables with `RUNS` runs of `n` identities, one statement per table and run. */
async function fill(db: ReturnType<typeof wrapPgPool>["db"], n: number, log: BenchKit["log"]) {
  for (let r = 1; r <= RUNS; r++) {
    const id = `2026${String(r).padStart(4, "0")}-000000-b${String(r).padStart(3, "0")}`;
    const mode = MODES[(r - 1) % 3] ?? "plan";
    await sql`insert into controls_migration.runs
      (id, mode, status, started_at, finished_at, options, tool_version, host, pid, exit_code)
      values (${id}, ${mode}, 'completed', now() - make_interval(days => ${RUNS - r}),
              now() - make_interval(days => ${RUNS - r}) + interval '1 minute', '{}', 'bench', 'bench', 1, 2)`.execute(
      db,
    );
    await sql`insert into controls_migration.snapshot_identities (run_id, identity_id, status)
      select ${id}, ${sql.raw(ID("g"))}, 'found' from generate_series(1, ${n}) g`.execute(db);
    await sql`insert into controls_migration.source_rows
      (run_id, seq, identity_id, user_disabled, admin_disabled, valid)
      select ${id}, g, ${sql.raw(ID("g"))}, g % 16 = 0 or g % 24 = 0, g % 48 = 0, true
      from generate_series(8, ${n}, 8) g`.execute(db);
    await sql`insert into controls_migration.snapshot_controls
      (run_id, identity_id, control_id, type, set_by, set_by_raw, is_overridable)
      select ${id}, ${sql.raw(ID("g"))}, 'ctl-' || ${r} || '-' || g, 'SELL_ONLY', 'client', 'SET_BY_CLIENT', true
      from generate_series(16, ${n}, 16) g`.execute(db);
    await sql`insert into controls_migration.findings
      (run_id, identity_id, finding, user_disabled, admin_disabled, expected_type, expected_set_by,
       expected_is_overridable)
      select ${id}, ${sql.raw(ID("g"))},
        case when g % 16 = 0 then 'in_sync' else 'missing_client_control' end,
        true, false, 'SELL_ONLY', 'CLIENT', true
      from generate_series(8, ${n}, 8) g`.execute(db);
    if (mode !== "plan") {
      await sql`insert into controls_migration.actions
        (run_id, identity_id, action, control_type, control_key, status, outcome, attempts,
         http_status, result_control_id)
        select ${id}, ${sql.raw(ID("g"))}, 'create', 'SELL_ONLY', 'SELL_ONLY:client', 'succeeded',
          'created', 1, 201, 'ctl-new-' || g
        from generate_series(40, ${n}, 40) g`.execute(db);
    }
    log(`h: run ${r}/${RUNS} (${mode}) written`);
  }
  await sql`analyze`.execute(db);
}

/** Scenario h. */
export async function showScenario(kit: BenchKit): Promise<Record<string, unknown>> {
  if (!kit.postgres || !kit.backends.includes("postgres")) {
    kit.log("h: skipped, it runs on PostgreSQL only");
    return { skipped: "scenario h runs on PostgreSQL only" };
  }
  // The largest size of the run (1,000,000 by default; 1,000 with --quick).
  const n = Math.max(...kit.sizes);
  const target = await openTarget(kit.cleanup, kit.postgres, "postgres");
  const handle = wrapPgPool(createPgPool(String(target.args[1]), 4));
  kit.cleanup.add("close the bench pool", () => handle.close());
  await migrateToLatest(handle.db, silentLogger);
  const fillStarted = performance.now();
  await fill(handle.db, n, kit.log);
  const fillS = (performance.now() - fillStarted) / 1000;
  const size = await sql<{
    mb: number;
  }>`select round(pg_database_size(current_database()) / 1048576.0)::int as mb`.execute(handle.db);

  const ids = await sql<{ acted: string; plain: string }>`
    select ${sql.raw(ID(`${Math.floor(n / 80) * 40}`))} as acted, ${sql.raw(ID("3"))} as plain`.execute(
    handle.db,
  );
  const samples = {
    with_actions: ids.rows[0]?.acted ?? "",
    snapshot_only: ids.rows[0]?.plain ?? "",
    unknown: "not-an-identity-of-this-database",
  };
  const timings: Record<string, { runs: number; p50_ms: number; max_ms: number }> = {};
  for (const [label, identity] of Object.entries(samples)) {
    const ms: number[] = [];
    let runs = 0;
    for (let i = 0; i < 25; i++) {
      const t = performance.now();
      runs = (await identityHistoryPage(handle.db, identity, null, 21)).length;
      ms.push(performance.now() - t);
    }
    timings[label] = {
      runs,
      p50_ms: round(percentile(ms, 0.5), 1),
      max_ms: round(Math.max(...ms), 1),
    };
    kit.log(`h: show ${label}: ${runs} runs, p50 ${timings[label]?.p50_ms} ms`);
  }

  // report.html (and diff.csv) of the newest run, streamed from this database.
  const dir = mkdtempSync(join(tmpdir(), "cm-bench-report-"));
  kit.cleanup.add(`remove ${dir}`, () => rmSync(dir, { recursive: true, force: true }));
  const runId = `2026${String(RUNS).padStart(4, "0")}-000000-b${String(RUNS).padStart(3, "0")}`;
  const summary: Omit<RunSummary, "reports"> = {
    run_id: runId,
    mode: "apply",
    status: "completed",
    started_at: new Date(Date.now() - 60_000).toISOString(),
    finished_at: new Date().toISOString(),
    duration_s: 60,
    strategy: "bulk",
    source: { rows_read: n, candidates: Math.floor(n / 8), anomalies: 0 },
    findings: { in_sync: Math.floor(n / 16), missing_client_control: Math.floor(n / 16) },
    outcomes: { "succeeded:created": Math.floor(n / 40) },
    requests: {},
    throughput: { identities_per_s: n / 60, actions_per_s: n / 2400 },
    changes: null,
    exit_code: 0,
  };
  const reportStarted = performance.now();
  const written = await writeRunReport(handle.db, summary, dir, true);
  const reportS = (performance.now() - reportStarted) / 1000;
  const htmlMb = statSync(join(dir, "report.html")).size / 1048576;
  kit.log(
    `h: report of ${written.reports.rows} rows in ${round(reportS, 1)} s, report.html ${round(htmlMb, 1)} MB`,
  );
  await handle.close();
  await target.drop();
  return {
    runs: RUNS,
    identities_per_run: n,
    fill_s: round(fillS, 1),
    database_mb: size.rows[0]?.mb ?? null,
    show_query: timings,
    report: {
      diff_rows: written.reports.rows,
      seconds_csv_summaries_and_html: round(reportS, 1),
      report_html_mb: round(htmlMb, 2),
    },
  };
}
