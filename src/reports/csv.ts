import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { stringify } from "csv-stringify";
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
 * in constant memory whatever the row count. The file appears under its name only once complete
 * (temporary file and rename). Returns the number of rows written.
 *
 * @example
 *   const rows = await writeDiffCsv("reports/r1/diff.csv", diffRows(db, "r1"));
 */
export function writeDiffCsv(path: string, rows: AsyncIterable<DiffRow>): Promise<number> {
  return writeCsv(path, DIFF_COLUMNS, rows);
}

/**
 * Streams rows of the given columns into a CSV file, each cell made safe ({@link safeCell}); the
 * file appears under its name only once complete. Returns the number of rows written.
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
  async function* counted() {
    for await (const row of rows) {
      count += 1;
      yield row;
    }
  }
  const stringifier = stringify({
    header: true,
    columns: [...columns],
    cast: {
      boolean: (v) => (v ? "true" : "false"),
      date: (v) => v.toISOString(),
      number: (v) => String(v),
      string: (v) => safeCell(v),
    },
  });
  const file = openAtomicFile(path);
  try {
    await pipeline(Readable.from(counted()), stringifier, file.stream);
    await file.commit();
  } catch (err) {
    await file.abort();
    throw err;
  }
  return count;
}
