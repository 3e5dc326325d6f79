/**
 * Writing report files safely. Each file is written to a fresh temporary file in the same folder
 * (created exclusively, so nothing planted there is followed) and then renamed over its name: a
 * reader never sees half a file, and a symbolic link planted under the file's name is replaced,
 * not followed and clobbered. A folder holding another run's report is refused unless forced.
 */
import { randomBytes } from "node:crypto";
import { createWriteStream, type WriteStream } from "node:fs";
import { lstat, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { UserError } from "../errors.ts";
import { claimOutFolder } from "./out-folder-lock.ts";

const tempName = (path: string) =>
  join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);

/**
 * Writes `data` to `path` through a temporary file and a rename.
 *
 * @example
 *   await writeFileAtomic("reports/r1/summary.json", json);
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

/** A file being written; `commit()` puts it in place, `abort()` throws it away. */
export interface AtomicFile {
  readonly stream: WriteStream;
  commit(): Promise<void>;
  abort(): Promise<void>;
}

/**
 * A write stream to a temporary file that becomes `path` on `commit()`, for files written in
 * pieces (diff.csv is streamed from the database).
 *
 * @example
 *   const file = openAtomicFile(path);
 *   try { await pipeline(rows, file.stream); await file.commit(); } catch (e) { await file.abort(); throw e; }
 */
export function openAtomicFile(path: string): AtomicFile {
  const tmp = tempName(path);
  const stream = createWriteStream(tmp, { flags: "wx" });
  // The writer's pipeline hears the first error; a later one (a full disk failing the flush of
  // what was still buffered) must not crash the process as an unhandled 'error' event.
  stream.on("error", () => {});
  return {
    stream,
    commit: () => rename(tmp, path),
    abort: async () => {
      stream.destroy();
      await rm(tmp, { force: true });
    },
  };
}

/**
 * Makes sure `dir` exists, is written by this process alone (see `out-folder-lock.ts`) and holds no
 * other run's report: a `summary.json` of another run (or one that cannot be read as a run's) is
 * refused, naming the run, unless `force`. `runId` undefined
 * means a run not started yet, for which any report there is another run's.
 *
 * @example
 *   await claimReportDir("reports/r1", "r1", false);
 */
export async function claimReportDir(
  dir: string,
  runId: string | undefined,
  force: boolean,
): Promise<void> {
  await mkdir(dir, { recursive: true });
  claimOutFolder(dir);
  const summary = join(dir, "summary.json");
  let owner: string | undefined;
  try {
    const st = await lstat(summary);
    owner = st.isFile() ? runIdOf(await readFile(summary, "utf8")) : "(not a regular file)";
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  if (owner === runId || force) return;
  throw new UserError(
    `The report folder ${dir} already holds the report of run ${owner ?? "(unreadable summary.json)"}; writing there would replace it. Choose another --out, or pass --force to replace it.`,
  );
}

function runIdOf(text: string): string | undefined {
  try {
    const id = (JSON.parse(text) as { run_id?: unknown }).run_id;
    return typeof id === "string" ? id : undefined;
  } catch {
    return undefined;
  }
}
