/**
 * Files that appear whole or not at all: written to a temporary file in the same folder, then
 * renamed over the target (a rename within one filesystem is atomic), so a reader (a browser,
 * node_exporter's textfile collector) never sees half a file. Same names and shapes as the
 * reliability work's `report-files.ts`, which replaces this module once it is on main.
 */
import { randomBytes } from "node:crypto";
import { createWriteStream, type WriteStream } from "node:fs";
import { rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

const tempName = (path: string) =>
  join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);

/**
 * Writes `data` to `path` through a temporary file and a rename.
 *
 * @example
 *   await writeFileAtomic("/var/lib/node_exporter/controls.prom", text);
 */
export async function writeFileAtomic(path: string, data: string): Promise<void> {
  const tmp = tempName(path);
  try {
    await writeFile(tmp, data, { flag: "wx" });
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** A file being written; once the stream is finished, `commit()` puts it in place. */
export interface AtomicFile {
  readonly stream: WriteStream;
  commit(): Promise<void>;
  abort(): Promise<void>;
}

/**
 * A write stream to a temporary file that becomes `path` on `commit()`, for files written in
 * pieces (report.html is streamed from the database).
 *
 * @example
 *   const file = openAtomicFile(path);
 *   try { await pipeline(chunks, file.stream); await file.commit(); }
 *   catch (e) { await file.abort(); throw e; }
 */
export function openAtomicFile(path: string): AtomicFile {
  const tmp = tempName(path);
  const stream = createWriteStream(tmp, { flags: "wx" });
  return {
    stream,
    commit: () => rename(tmp, path),
    abort: async () => {
      stream.destroy();
      await rm(tmp, { force: true });
    },
  };
}
