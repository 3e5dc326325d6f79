import { createWriteStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { stringify } from "csv-stringify";

/** The exact header of diff.csv; documented in the README. */
export const DIFF_COLUMNS = [
  "run_id",
  "identity_id",
  "user_disabled",
  "admin_disabled",
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

const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * Neutralises a cell that a spreadsheet would run as a formula (OWASP "CSV injection"): a leading
 * `=`, `+`, `-`, `@`, tab or CR gets a leading apostrophe. Ids come from the user's database and the
 * platform, so they are untrusted.
 *
 * @example
 *   neutraliseCell("=HYPERLINK(\"http://x\")") // "'=HYPERLINK(\"http://x\")"
 */
export function neutraliseCell(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

/**
 * Streams rows into a CSV file with csv-stringify, honouring back-pressure, so the file is written
 * in constant memory whatever the row count. Returns the number of rows written.
 */
export async function writeDiffCsv(path: string, rows: AsyncIterable<DiffRow>): Promise<number> {
  let count = 0;
  async function* counted() {
    for await (const row of rows) {
      count += 1;
      yield row;
    }
  }
  const stringifier = stringify({
    header: true,
    columns: DIFF_COLUMNS as unknown as string[],
    cast: {
      boolean: (v) => (v ? "true" : "false"),
      date: (v) => v.toISOString(),
      number: (v) => String(v),
      string: (v) => neutraliseCell(v),
    },
  });
  await pipeline(Readable.from(counted()), stringifier, createWriteStream(path));
  return count;
}
