/**
 * A full disk (ENOSPC, or EDQUOT: a quota reached) named for what it is: which file or folder
 * could not be written and which flag chose its place, instead of Node's bare "ENOSPC: no space
 * left on device, write". The embedded database (PGlite) never passes ENOSPC on: PostgreSQL fails
 * with a follow-on error ("XLogBeginInsert was already called", "cannot drop active portal"), so
 * a failure of its there is judged by the free space left on its folder's disk.
 */
import { statfsSync } from "node:fs";
import { UserError } from "./errors.ts";

const FULL = new Set(["ENOSPC", "EDQUOT"]);

export type DiskFlag = "--out" | "--data-dir" | "--metrics-file";

/**
 * Below this much free space the embedded database cannot go on: PostgreSQL writes its WAL in
 * 16 MB segments, and a statement that needs a new one fails. Two segments' worth.
 */
export const DATABASE_SPACE_FLOOR_BYTES = 32 * 1024 * 1024;

/** True when `err` is a write refused for want of space (or quota). */
export function isDiskFull(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === "string" && FULL.has(e.code)) return true;
  return typeof e?.message === "string" && /\bENOSPC\b|No space left on device/.test(e.message);
}

/** Bytes an unprivileged writer may still use on the disk holding `path`; undefined if unknown. */
export function freeBytes(path: string): number | undefined {
  try {
    const s = statfsSync(path);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

/** A UserError naming `file` and `flag`, when `err` is a full disk; `err` itself otherwise. */
export function diskFullError(err: unknown, file: string, flag: DiskFlag): unknown {
  if (!isDiskFull(err) || err instanceof UserError) return err;
  return new DiskFullError(file, flag);
}

/**
 * A failure of the embedded database in `dir` as a full disk naming `dir` and --data-dir, when the
 * disk is full or nearly (under {@link DATABASE_SPACE_FLOOR_BYTES} free); `err` itself otherwise.
 */
export function databaseDiskFullError(err: unknown, dir: string): unknown {
  if (err instanceof UserError) return err;
  if (isDiskFull(err)) return new DiskFullError(dir, "--data-dir");
  const free = freeBytes(dir);
  if (free === undefined || free >= DATABASE_SPACE_FLOOR_BYTES) return err;
  const said = err instanceof Error ? err.message : String(err);
  return new DiskFullError(
    dir,
    "--data-dir",
    `${(free / 1024 / 1024).toFixed(1)} MB free; the embedded database failed with: ${said}`,
  );
}

/** The disk holding `file` is full; `flag` is where the user chose that place. */
export class DiskFullError extends UserError {
  readonly file: string;
  readonly flag: string;

  constructor(file: string, flag: DiskFlag, detail?: string) {
    super(
      `No space left on the device for ${file} (${flag}): the disk holding it is full${detail ? ` (${detail})` : ""}. Free space there, or choose another ${flag}.`,
    );
    this.file = file;
    this.flag = flag;
  }
}
