/**
 * What the read commands (`runs`, `show`, `report`) print, from a database handle: the same
 * function whether the command opened the database itself or, on PGlite while a writer holds the
 * data folder, the writer answers it through the local channel (`local-channel.ts`).
 */
import type { Kysely } from "kysely";
import { countFindings } from "../../db/journal/finding-queries.ts";
import { countActionsByStatus } from "../../db/journal/journal-queries.ts";
import { getRun, listRuns } from "../../db/journal/run-queries.ts";
import { identityHistoryPage } from "../../db/report-queries/history-queries.ts";
import type { Database } from "../../db/schema.ts";
import { UserError } from "../../errors.ts";
import {
  renderIdentityHistory,
  renderIdentityHistoryJson,
} from "../../reports/identity-history.ts";
import { renderRunsTable, shownExitCode, shownStatus } from "../../reports/runs-table.ts";
import type { RunSummary } from "../../reports/summary.ts";
import { FINDING_KINDS } from "../classify/classify.ts";
import { reportDir, writeRunReport } from "../run/report.ts";

/** A read command and its settings, as a request of the local channel carries it. */
export type ReadRequest =
  | { readonly command: "runs"; readonly limit: number; readonly json: boolean }
  | {
      readonly command: "show";
      readonly identityId: string;
      readonly limit: number;
      readonly before: string | null;
      readonly json: boolean;
    }
  | {
      readonly command: "report";
      readonly runId: string;
      /** Absolute: the writer's working folder is not the requester's. */
      readonly dir: string;
      readonly all: boolean;
      readonly json: boolean;
    };

/** Quotes an id for the "older runs" command line so that it can be pasted as printed. */
const shellQuote = (s: string) =>
  /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`;

/**
 * The runs, a running run with its counts so far: its close writes them, so until then they are
 * read from its findings and journal, as a close would write them.
 */
async function runsWithCounts(db: Kysely<Database>, limit: number) {
  const runs = await listRuns(db, limit);
  return Promise.all(
    runs.map(async (r) => {
      if (r.status !== "running") return r;
      const [findings, actions] = await Promise.all([
        countFindings(db, r.id),
        countActionsByStatus(db, r.id),
      ]);
      return { ...r, counts: { ...findings, ...actions } };
    }),
  );
}

async function runsText(db: Kysely<Database>, limit: number, json: boolean): Promise<string> {
  const runs = await runsWithCounts(db, limit);
  const now = new Date();
  if (json) {
    return runs
      .map(
        (r) =>
          `${JSON.stringify({
            id: r.id,
            mode: r.mode,
            status: r.status,
            stale: shownStatus(r, now) !== r.status,
            exit_code: shownExitCode(r),
            started_at: r.started_at,
            finished_at: r.finished_at,
            heartbeat_at: r.heartbeat_at,
            error: r.error,
            source_rows_read: r.source_rows_read,
            counts: r.counts,
          })}\n`,
      )
      .join("");
  }
  return runs.length === 0 ? "No runs yet.\n" : `${renderRunsTable(runs, now, FINDING_KINDS)}\n`;
}

async function showText(
  db: Kysely<Database>,
  r: Extract<ReadRequest, { command: "show" }>,
): Promise<string> {
  if (r.before && !(await getRun(db, r.before))) {
    throw new UserError(`--before ${r.before}: no such run. List runs with: controls-migrate runs`);
  }
  // One run more than shown tells whether older runs exist.
  const page = await identityHistoryPage(db, r.identityId, r.before, r.limit + 1);
  const runs = page.slice(0, r.limit);
  const last = page.length > r.limit ? (runs[runs.length - 1]?.run_id ?? null) : null;
  return r.json
    ? renderIdentityHistoryJson(r.identityId, runs, last)
    : renderIdentityHistory(
        r.identityId,
        runs,
        last && `controls-migrate show ${shellQuote(r.identityId)} --before ${last}`,
      );
}

async function reportText(
  db: Kysely<Database>,
  r: Extract<ReadRequest, { command: "report" }>,
): Promise<string> {
  const run = await getRun(db, r.runId);
  if (!run) throw new UserError(`No run "${r.runId}". List runs with: controls-migrate runs`);
  if (!run.summary) {
    throw new UserError(
      `Run ${r.runId} is ${run.status} and has no summary yet; resume or re-run it.`,
    );
  }
  const { reports: _old, ...summary } = run.summary as unknown as RunSummary;
  const full = await writeRunReport(db, summary, reportDir(r.runId, r.dir), r.all);
  return r.json
    ? `${JSON.stringify(full)}\n`
    : `Wrote ${full.reports.dir} (${full.reports.rows} rows; open ${full.reports.dir}/report.html)\n`;
}

/**
 * What a read command prints on stdout. Throws a UserError naming what is wrong.
 *
 * @example
 *   process.stdout.write(await readCommandText(db, { command: "runs", limit: 20, json: false }));
 */
export function readCommandText(db: Kysely<Database>, r: ReadRequest): Promise<string> {
  if (r.command === "runs") return runsText(db, r.limit, r.json);
  if (r.command === "show") return showText(db, r);
  return reportText(db, r);
}
