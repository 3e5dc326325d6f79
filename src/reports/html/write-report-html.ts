/**
 * Writes report.html: the page's head, then the first `HTML_ROW_LIMIT` diff rows streamed from
 * the database one page at a time into the page's JSON block, then the tail. Memory stays flat
 * whatever the run's size; the file appears whole (temporary file, then rename).
 */
import { once } from "node:events";
import { finished } from "node:stream/promises";
import type { DiffRow } from "../csv.ts";
import { openAtomicFile } from "../report-files.ts";
import { jsonForScript, showInvisible } from "./html-text.ts";
import { type HtmlReportInput, renderPageHead, renderPageTail } from "./report-page.ts";

/** How many diff rows the page holds; the rest are in diff.csv. */
export const HTML_ROW_LIMIT = 10_000;

const text = (v: DiffRow[keyof DiffRow]): string | null => {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.toISOString();
  return showInvisible(String(v));
};

const control = (...parts: (DiffRow[keyof DiffRow] | string)[]) =>
  parts
    .map((p) => text(p))
    .filter((p): p is string => p !== null && p !== "")
    .join(" ") || null;

const overridable = (v: DiffRow[keyof DiffRow]) =>
  v === null ? null : v ? "overridable" : "not overridable";

/**
 * The identity cell: the id, and for an invalid source row where the source holds it (`seq`),
 * `(no id)` when it has none.
 */
function identityCell(r: DiffRow, seq: number | undefined): string | null {
  if (seq === undefined) return text(r.identity_id);
  const id = r.identity_id === null ? "(no id)" : `"${text(r.identity_id)}"`;
  return `${id} · source row ${seq}`;
}

/**
 * One diff row as the array of `TABLE_COLUMNS`; `seq` is an invalid source row's place in the
 * source, as the reader numbered it.
 */
export function tableRow(r: DiffRow, seq?: number): (string | number | null)[] {
  return [
    identityCell(r, seq),
    text(r.user_disabled),
    text(r.admin_disabled),
    text(r.finding),
    control(r.expected_type, r.expected_set_by, overridable(r.expected_is_overridable)),
    control(r.observed_control_id, r.observed_set_by, overridable(r.observed_is_overridable)),
    text(r.other_active_controls),
    text(r.action),
    text(r.outcome),
    typeof r.http_status === "number" ? r.http_status : null,
    text(r.error),
    typeof r.attempts === "number" ? r.attempts : null,
  ];
}

/**
 * Writes the page to `path`. `rows` are diff.csv's rows in the same order; only the first
 * `limit` are read. Returns how many the page holds.
 *
 * @example
 *   await writeReportHtml(join(dir, "report.html"), input, diffRows(db, runId, false));
 */
export async function writeReportHtml(
  path: string,
  input: HtmlReportInput,
  rows: AsyncIterable<DiffRow>,
  limit = HTML_ROW_LIMIT,
): Promise<number> {
  const file = openAtomicFile(path);
  const write = async (chunk: string) => {
    // A write that already failed (a full disk) stops here, not in a wait for "drain" or "finish".
    if (file.stream.errored) throw file.stream.errored;
    if (!file.stream.write(chunk)) await once(file.stream, "drain");
  };
  let shown = 0;
  let invalid = 0;
  const seqOf = (r: DiffRow) =>
    r.finding === "invalid_source_row" ? input.invalidRowSeqs?.[invalid++] : undefined;
  try {
    await write(renderPageHead(input));
    if (limit > 0) {
      for await (const row of rows) {
        await write(`${shown === 0 ? "" : ",\n"}${jsonForScript(tableRow(row, seqOf(row)))}`);
        shown += 1;
        if (shown >= limit) break;
      }
    }
    await write(renderPageTail(input, shown));
    file.stream.end();
    await finished(file.stream);
    await file.commit();
  } catch (err) {
    await file.abort();
    throw err;
  }
  return shown;
}
