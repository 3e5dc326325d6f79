import { linkSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { UserError } from "../errors.ts";

/** A held lock; `release()` is idempotent. */
export interface DataDirLock {
  readonly path: string;
  release(): void;
}

/**
 * Takes the single-process lock of an embedded PGlite data folder. PGlite has no postmaster and
 * no lock of its own: two processes opening the same folder silently corrupt it. The lock is a
 * `<dataDir>.lock` file created exclusively and holding our pid; a lock whose pid is no longer
 * alive (the holder was SIGKILLed) is stale and taken over.
 *
 * @example
 *   const lock = acquireDataDirLock("/abs/.data/pglite");
 *   try { ... } finally { lock.release(); }
 */
export function acquireDataDirLock(dataDir: string): DataDirLock {
  const path = `${dataDir}.lock`;
  for (let attempt = 0; attempt < 3; attempt++) {
    // Written aside then hard-linked into place: the lock appears atomically with its pid in it.
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, `${process.pid}\n`);
    try {
      linkSync(tmp, path);
      let held = true;
      return {
        path,
        release() {
          if (!held) return;
          held = false;
          rmSync(path, { force: true });
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    } finally {
      rmSync(tmp, { force: true });
    }
    const holder = readHolder(path);
    if (holder !== undefined && holder !== process.pid && isAlive(holder)) {
      throw new UserError(
        `The embedded database in ${dataDir} is in use by another process (pid ${holder}). PGlite serves one process at a time: wait for it to finish, choose another --data-dir (env CONTROLS_DATA_DIR), or use PostgreSQL with --database-url (env DATABASE_URL).`,
      );
    }
    if (holder === process.pid) {
      throw new UserError(
        `The embedded database in ${dataDir} is already open in this process; close the first handle before opening another.`,
      );
    }
    // Stale: the holder died without releasing it (SIGKILL, power loss).
    rmSync(path, { force: true });
  }
  throw new UserError(
    `Could not take the lock ${path}; remove it if no controls-migrate is running.`,
  );
}

function readHolder(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, "utf8").trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
