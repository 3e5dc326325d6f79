import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { stringify } from "csv-stringify/sync";
import { escapeInvisible } from "../visible-text.ts";
import { openAtomicFile } from "./report-files.ts";

/** The exact header of diff.csv; documented in the README. */
export const DIFF_COLUMNS = [
  "run_id",
  "identity_id",
  "user_disabled",
  "admin_disabled",
  "platform_user_disabled",
  "platform_admin_disabled",
  "finding",
  "expected_type",
  "expected_set_by",
  "expected_is_overridable",
  "observed_control_id",
  "observed_set_by",
  "observed_is_overridable",
  "other_active_controls",
  "action",
  "outcome",
  "http_status",
  "error",
  "attempts",
  "at",
] as const;
export type DiffColumn = (typeof DIFF_COLUMNS)[number];
export type DiffRow = Record<DiffColumn, string | number | boolean | Date | null>;

/**
 * A cell a spreadsheet would run as a formula: after any leading whitespace (spreadsheets skip it),
 * one of `= + - @` or its fullwidth form `＝ ＋ － ＠` (some spreadsheets fold those to ASCII), or
 * a leading tab or CR.
 */
const FORMULA_START = /^(?:[\t\r]|[\s\u00a0\u3000]*[=+\-@\uff1d\uff0b\uff0d\uff20])/u;

/**
 * Neutralises a cell that a spreadsheet would run as a formula (OWASP "CSV injection"): a cell
 * starting with `=`, `+`, `-`, `@` (or their fullwidth forms), even after whitespace, or with a tab
 * or CR, gets a leading apostrophe. Ids come from the user's database and the platform, so they are
 * untrusted.
 *
 * @example
 *   neutraliseCell("=HYPERLINK(\"http://x\")") // "'=HYPERLINK(\"http://x\")"
 *   neutraliseCell(" =1+1") // "' =1+1"
 *   neutraliseCell("＝1+1") // "'＝1+1"
 */
export function neutraliseCell(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

/**
 * What a text cell of any report becomes: control and bidi characters escaped visibly (`\u001b`),
 * so that printing the file to a terminal shows the id as it is, then formula-neutralised.
 *
 * @example
 *   safeCell("id\u001b[2J") // "id\\u001b[2J"
 *   safeCell("=1+1") // "'=1+1"
 */
export function safeCell(value: string): string {
  return neutraliseCell(escapeInvisible(value));
}

/**
 * Streams rows into a CSV file with csv-stringify, honouring back-pressure, so the file is written
 * in constant memory whatever the row count (see {@link writeCsv}). The file appears under its
 * name only once complete (temporary file and rename). Returns the number of rows written.
 *
 * @example
 *   const rows = await writeDiffCsv("reports/r1/diff.csv", diffRows(db, "r1"));
 */
export function writeDiffCsv(path: string, rows: AsyncIterable<DiffRow>): Promise<number> {
  return writeCsv(path, DIFF_COLUMNS, rows);
}

/** Rows stringified at a time: one chunk for the file, not one stream write a row. */
const ROWS_A_CHUNK = 1000;

/**
 * How each cell is written (csv-stringify's `cast`): booleans and numbers as text, dates as ISO
 * instants, text made safe ({@link safeCell}).
 */
export const CSV_CAST = {
  boolean: (v: boolean) => (v ? "true" : "false"),
  date: (v: Date) => v.toISOString(),
  number: (v: number) => String(v),
  string: (v: string) => safeCell(v),
};

/**
 * Streams rows of the given columns into a CSV file, each cell made safe ({@link safeCell}); the
 * file appears under its name only once complete. Returns the number of rows written. Rows are
 * stringified by csv-stringify a thousand at a time and written as one chunk, in constant memory
 * and with the file's back-pressure: row by row through its stream, the stream's own machinery
 * (a transform, a push and a write a row) was most of the 0.65 s a 1,000,000-identity plan spent
 * on its 120,735 rows of diff.csv (`--cpu-prof`).
 *
 * @example
 *   await writeCsv("reports/r1/changes.csv", CHANGE_COLUMNS, changeRows(db, "r1"));
 */
export async function writeCsv<C extends string>(
  path: string,
  columns: readonly C[],
  rows: AsyncIterable<Record<C, string | number | boolean | Date | null>>,
): Promise<number> {
  let count = 0;
  const options = { columns: [...columns], cast: CSV_CAST };
  async function* chunks() {
    let header = true;
    let batch: Record<C, string | number | boolean | Date | null>[] = [];
    for await (const row of rows) {
      count += 1;
      batch.push(row);
      if (batch.length < ROWS_A_CHUNK) continue;
      yield stringify(batch, { ...options, header });
      header = false;
      batch = [];
    }
    // The header alone when there was no row.
    if (batch.length > 0 || header) yield stringify(batch, { ...options, header });
  }
  const file = openAtomicFile(path);
  try {
    await pipeline(Readable.from(chunks()), file.stream);
    await file.commit();
  } catch (err) {
    await file.abort();
    throw err;
  }
  return count;
}
