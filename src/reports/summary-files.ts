/**
 * Writes a run's summary.json and summary.md, each by temporary file and rename, with invisible
 * characters escaped; a full disk is reported with the file and the --out flag.
 */
import { diskFullError } from "../disk-full.ts";
import { escapeInvisible } from "../visible-text.ts";
import { writeFileAtomic } from "./report-files.ts";
import type { RunSummary } from "./summary.ts";
import { renderSummaryMarkdown } from "./summary-markdown.ts";

export async function writeSummaries(
  jsonPath: string,
  mdPath: string,
  s: RunSummary,
): Promise<void> {
  // JSON already escapes C0 controls; DEL, C1 and bidi controls can only sit inside its strings.
  // A full disk names the file and --out (the report folder's flag), not only "ENOSPC".
  const full = (path: string) => (err: unknown) =>
    Promise.reject(diskFullError(err, path, "--out"));
  await writeFileAtomic(
    jsonPath,
    escapeInvisible(`${JSON.stringify(s, null, 2)}\n`, { keepNewlines: true }),
  ).catch(full(jsonPath));
  await writeFileAtomic(
    mdPath,
    escapeInvisible(renderSummaryMarkdown(s), { keepNewlines: true }),
  ).catch(full(mdPath));
}
