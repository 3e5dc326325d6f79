/**
 * changes.csv, beside diff.csv: each outside change a writing run saw since the previous writing
 * run on the same platform and source (the rows behind summary.json's `changes.outside`).
 */
import { join } from "node:path";
import type { Kysely } from "kysely";
import { worldChangesPage } from "../../db/report-queries/world-delta-queries.ts";
import type { Database } from "../../db/schema.ts";
import { writeCsv } from "../../reports/csv.ts";
import { ownerSpelling } from "../../reports/owner-spelling.ts";

/** The exact header of changes.csv; documented in the README. */
export const CHANGE_COLUMNS = [
  "run_id",
  "since_run_id",
  "identity_id",
  "change",
  "control_id",
  "set_by",
  "undone",
  "detail",
  "seen_at",
] as const;
type ChangeRow = Record<(typeof CHANGE_COLUMNS)[number], string | boolean | Date | null>;

async function* changeRows(db: Kysely<Database>, runId: string): AsyncGenerator<ChangeRow> {
  let after: string | null = null;
  for (;;) {
    const page = await worldChangesPage(db, runId, after, 5000);
    if (page.length === 0) return;
    after = page[page.length - 1]?.key ?? null;
    for (const c of page) {
      yield {
        run_id: c.run_id,
        since_run_id: c.since_run_id,
        identity_id: c.identity_id,
        change: c.kind,
        control_id: c.control_id,
        set_by: c.set_by && ownerSpelling(c.set_by),
        undone: c.undone,
        detail: c.detail && ownerSpelling(c.detail),
        seen_at: c.seen_at,
      };
    }
  }
}

/**
 * Writes `dir/changes.csv` for a run that compared itself with a previous one. Returns its path.
 *
 * @example
 *   await writeChangesCsv(db, runId, "reports/r1");
 */
export async function writeChangesCsv(
  db: Kysely<Database>,
  runId: string,
  dir: string,
): Promise<string> {
  const path = join(dir, "changes.csv");
  await writeCsv(path, CHANGE_COLUMNS, changeRows(db, runId));
  return path;
}
