/**
 * A full disk (ENOSPC, or EDQUOT: a quota reached) named for what it is: which file could not be
 * written and which flag chose its place, instead of Node's bare "ENOSPC: no space left on device,
 * write".
 */
import { UserError } from "../errors.ts";

const FULL = new Set(["ENOSPC", "EDQUOT"]);

/** True when `err` is a write refused for want of space (or quota). */
export function isDiskFull(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === "string" && FULL.has(e.code)) return true;
  return typeof e?.message === "string" && /\bENOSPC\b|No space left on device/.test(e.message);
}

/** A UserError naming `file` and `flag`, when `err` is a full disk; `err` itself otherwise. */
export function diskFullError(
  err: unknown,
  file: string,
  flag: "--out" | "--data-dir" | "--metrics-file",
): unknown {
  if (!isDiskFull(err) || err instanceof UserError) return err;
  return new DiskFullError(file, flag);
}

/** The disk holding `file` is full; `flag` is where the user chose that place. */
export class DiskFullError extends UserError {
  readonly file: string;
  readonly flag: string;

  constructor(file: string, flag: "--out" | "--data-dir" | "--metrics-file") {
    super(
      `No space left on the device for ${file} (${flag}): the disk holding it is full. Free space there, or choose another ${flag}.`,
    );
    this.file = file;
    this.flag = flag;
  }
}
