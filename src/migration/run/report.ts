import { constants } from "node:fs";
import { access, lstat, mkdir, realpath, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import type { Kysely } from "kysely";
import { runHasActions } from "../../db/journal/journal-queries.ts";
import { listRunEvents } from "../../db/journal/run-control-queries.ts";
import { type DiffRecord, diffPage } from "../../db/report-queries/diff-queries.ts";
import { lastSeenPage } from "../../db/report-queries/finding-delta-queries.ts";
import type { Database } from "../../db/schema.ts";
import { diskFullError } from "../../disk-full.ts";
import { Interrupted, UserError } from "../../errors.ts";
import { canonicalSummary } from "../../reports/canonical-summary.ts";
import { DIFF_COLUMNS, type DiffRow, writeDiffCsv } from "../../reports/csv.ts";
import { writeReportHtml } from "../../reports/html/write-report-html.ts";
import { ownerSpelling } from "../../reports/owner-spelling.ts";
import { claimReportDir } from "../../reports/report-files.ts";
import type { ControlEventFigure, RunSummary } from "../../reports/summary.ts";
import { writeSummaries } from "../../reports/summary-files.ts";
import { writeChangesCsv } from "./changes-report.ts";
import { htmlReportInput } from "./report-html-input.ts";
import { revertDiffRows } from "./revert-diff.ts";

/**
 * What a finding asks for when no journal entry exists yet (plan runs). Whether a control may be
 * pruned is the diff rules' verdict, stored with the finding; it is never re-derived here.
 */
function intendedAction(r: DiffRecord): string | null {
  if (r.finding === "missing_client_control") return "create";
  if (r.prunable) return "delete_with_prune";
  return null;
}

function toDiffRow(r: DiffRecord): DiffRow {
  return {
    run_id: r.run_id,
    identity_id: r.identity_id,
    user_disabled: r.user_disabled,
    admin_disabled: r.admin_disabled,
    platform_user_disabled: r.platform_user_disabled,
    platform_admin_disabled: r.platform_admin_disabled,
    finding: r.finding,
    expected_type: r.expected_type,
    expected_set_by: r.expected_set_by,
    expected_is_overridable: r.expected_is_overridable,
    observed_control_id: r.observed_control_id,
    observed_set_by: r.observed_set_by && ownerSpelling(r.observed_set_by),
    observed_is_overridable: r.observed_is_overridable,
    other_active_controls: r.other_active_controls && ownerSpelling(r.other_active_controls),
    action: r.action ?? intendedAction(r),
    outcome: r.action ? (r.outcome ?? r.status) : r.detail && ownerSpelling(r.detail),
    http_status: r.http_status,
    error: r.error,
    attempts: r.attempts,
    at: r.at,
  };
}

/** A run's diff rows: its findings with their actions, or a revert's undos. */
function runDiffRows(
  db: Kysely<Database>,
  summary: Pick<RunSummary, "run_id" | "revert">,
  all: boolean,
  signal: AbortSignal | undefined,
): AsyncGenerator<DiffRow> {
  const rows = summary.revert
    ? revertDiffRows(db, summary.run_id, summary.revert.of_run_id)
    : diffRows(db, summary.run_id, all);
  return signal ? untilAborted(rows, signal) : rows;
}

/** The report stage stops at a signal: the file being written is thrown away, never half kept. */
function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new Interrupted("Interrupted while writing the report");
}

/** `rows` until `signal` aborts (checked at every row: a page of them is read at once). */
async function* untilAborted(
  rows: AsyncGenerator<DiffRow>,
  signal: AbortSignal,
): AsyncGenerator<DiffRow> {
  for await (const row of rows) {
    throwIfAborted(signal);
    yield row;
  }
}

async function* diffRows(
  db: Kysely<Database>,
  runId: string,
  all: boolean,
): AsyncGenerator<DiffRow> {
  let after = 0;
  const withActions = await runHasActions(db, runId);
  for (;;) {
    // Pages of 5000: each query costs a few milliseconds of planning, whatever its size.
    const page = await diffPage(db, runId, after, 5000, all, withActions);
    if (page.length === 0) break;
    after = page[page.length - 1]?.id ?? after;
    for (const r of page) yield toDiffRow(r);
  }
  yield* lastSeenRows(db, runId);
}

/**
 * The findings of identities the run did not observe, kept as last seen by an earlier run: after
 * its own rows, each with the outcome `last seen by run X`, never resolved (issue 50 §4).
 */
async function* lastSeenRows(db: Kysely<Database>, runId: string): AsyncGenerator<DiffRow> {
  let after: { identity_id: string; finding: string } | null = null;
  for (;;) {
    const page = await lastSeenPage(db, runId, after, 5000);
    if (page.length === 0) return;
    after = page[page.length - 1] ?? null;
    for (const r of page) {
      const row = Object.fromEntries(DIFF_COLUMNS.map((c) => [c, null])) as DiffRow;
      yield {
        ...row,
        run_id: runId,
        identity_id: r.identity_id,
        finding: r.finding,
        observed_set_by: r.owner ? ownerSpelling(r.owner) : null,
        outcome: `last seen by run ${r.seen_by_run_id}`,
      };
    }
  }
}

/**
 * The signal a report stage heeds: the run's, unless it was already heard before the report (a
 * run stopped in its reads or writes still writes its report, which names the resume).
 *
 * @example
 *   await writeRunReport(db, summary, dir, all, false, reportStageSignal(deps.signal));
 */
export function reportStageSignal(signal: AbortSignal | undefined): AbortSignal | undefined {
  return signal?.aborted ? undefined : signal;
}

export function reportDir(runId: string, out?: string): string {
  return resolve(out ?? join("reports", runId));
}

/** Kernel pseudo-filesystems: never a place for reports (mkdir there can even spin forever). */
const PSEUDO_FS = ["/proc", "/sys"];
const isUnder = (path: string, root: string) => path === root || path.startsWith(`${root}${sep}`);

/** The deepest part of `path` that exists (`/`, at worst). */
async function existingAncestor(path: string): Promise<string> {
  let p = path;
  for (;;) {
    try {
      await lstat(p);
      return p;
    } catch {
      const up = dirname(p);
      if (up === p) return p;
      p = up;
    }
  }
}

/**
 * Checks, before any request is sent, that a run's report folder can be written: `--out DIR`, or
 * `reports/` when none is given. Creates the folder. Refuses a path that is a file, a folder that
 * cannot be created or written, and anything under /proc or /sys, with a message naming --out.
 *
 * @example
 *   await checkReportDir("audit/"); // throws UserError("--out audit/ is a file, not a folder.")
 */
export async function checkReportDir(out: string | undefined): Promise<void> {
  const dir = resolve(out ?? "reports");
  const named =
    out === undefined ? `The report folder ${dir} (set another with --out)` : `--out ${out}`;
  const real = await realpath(await existingAncestor(dir)).catch(() => dir);
  if (PSEUDO_FS.some((root) => isUnder(dir, root) || isUnder(real, root))) {
    throw new UserError(
      `${named} is under /proc or /sys, which hold no files; choose a folder on a disk.`,
    );
  }
  const found = await stat(dir).catch(() => null);
  if (found && !found.isDirectory()) {
    throw new UserError(
      `${named} is a file, not a folder; choose a folder (it is created if missing).`,
    );
  }
  try {
    await mkdir(dir, { recursive: true });
    await access(dir, constants.W_OK | constants.X_OK);
    // access() trusts permission bits; a read-only mount only shows on a real write.
    const probe = join(dir, `.controls-migrate-write-check-${process.pid}`);
    await writeFile(probe, "");
    await rm(probe, { force: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    throw new UserError(
      `${named} cannot be created or written (${code}); choose a folder you can write to.`,
    );
  }
}

/**
 * Writes `diff.csv` (streamed from the database), `summary.json`/`summary.md` and `report.html`
 * (the first diff rows streamed again) into `dir`, each through a temporary file and a rename.
 * Regenerating a run's folder later gives the same files; a folder holding another run's report is
 * refused unless `force`. When `signal` aborts, stops at the next row or file with an
 * `Interrupted`, leaving no temporary file behind.
 */
export async function writeRunReport(
  db: Kysely<Database>,
  summary: Omit<RunSummary, "reports">,
  dir: string,
  all: boolean,
  force = false,
  signal?: AbortSignal,
): Promise<RunSummary> {
  throwIfAborted(signal);
  await claimReportDir(dir, summary.run_id, force);
  const csv = join(dir, "diff.csv");
  const rows = await writeDiffCsv(csv, runDiffRows(db, summary, all, signal)).catch(
    diskFullAt(csv),
  );
  throwIfAborted(signal);
  if (summary.changes?.since_run_id) await writeChangesCsv(db, summary.run_id, dir);
  throwIfAborted(signal);
  const events = await controlEvents(db, summary.run_id);
  const full: RunSummary = canonicalSummary({
    ...summary,
    ...(events.length > 0 ? { control_events: events } : {}),
    reports: { dir, diff_csv: csv, rows },
  });
  await writeSummaries(join(dir, "summary.json"), join(dir, "summary.md"), full);
  const html = join(dir, "report.html");
  throwIfAborted(signal);
  const input = await htmlReportInput(db, full);
  await writeReportHtml(html, input, runDiffRows(db, summary, all, signal)).catch(diskFullAt(html));
  return full;
}

/** Rethrows a full disk as an error naming `path` and --out (the report folder's flag). */
const diskFullAt = (path: string) => (err: unknown) =>
  Promise.reject(diskFullError(err, path, "--out"));

/** The run's pauses, continues, rate changes and holds, as summary.json lists them. */
async function controlEvents(db: Kysely<Database>, runId: string): Promise<ControlEventFigure[]> {
  return (await listRunEvents(db, runId)).map((e) => ({
    at: e.at.toISOString(),
    who: e.who,
    pid: e.pid,
    event: e.kind,
    rate: e.rate,
    detail: e.detail,
  }));
}
