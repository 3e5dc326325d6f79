/**
 * One writer per report folder: a run claims its `--out` folder with a lock file created atomically
 * (`.controls-migrate-out.lock`, the scheme of the PGlite data folder's lock: exclusive creation, a
 * heartbeat, a dead holder's lock taken over atomically). A second run given the same folder while
 * the first is alive is refused at start, naming the other run; `--force` does not override it (it
 * replaces a finished run's report, never a live writer's). The lock goes when the process exits.
 */
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { acquireDataDirLock, type DataDirLock } from "../db/connection/data-dir-lock.ts";

const LOCK_BASE = ".controls-migrate-out";
/** Which run holds the folder, once it has an id: read by the run that is refused. */
const RUN_FILE = ".controls-migrate-out.run";

const held = new Map<string, DataDirLock>();

/**
 * Claims `dir` (an existing folder) for this process, or throws a UserError naming the run that
 * writes there. Claiming a folder this process holds already is a no-op.
 *
 * @example
 *   claimOutFolder("/abs/audit");
 */
export function claimOutFolder(dir: string): void {
  if (held.has(dir)) return;
  const lock = acquireDataDirLock(join(dir, LOCK_BASE), {
    inUse: (holder, refreshedS) =>
      `The report folder ${dir} is being written by another run (${runOf(dir, holder)}; its lock was refreshed ${refreshedS} s ago). Two runs never write one report folder: wait for that run to finish, or choose another --out. --force replaces a finished run's report, not a running one's.`,
    // A folder removed under the run (tests do) is not worth crashing for; nothing else takes it.
    onCompromised: () => held.delete(dir),
  });
  held.set(dir, lock);
  if (held.size === 1) process.once("exit", releaseOutFolders);
}

/**
 * Records `runId` beside every folder this process holds, so a run refused there can name it.
 *
 * @example
 *   noteOutFolderRun("20261126-010203-ab12");
 */
export function noteOutFolderRun(runId: string): void {
  for (const dir of held.keys()) {
    const path = join(dir, RUN_FILE);
    try {
      writeFileSync(
        `${path}.${process.pid}.tmp`,
        `${JSON.stringify({ run_id: runId, pid: process.pid })}\n`,
      );
      renameSync(`${path}.${process.pid}.tmp`, path);
    } catch {
      // Only a refused run's message is poorer for it.
    }
  }
}

/** Lets go of every folder this process holds (also done when it exits). */
export function releaseOutFolders(): void {
  for (const lock of held.values()) lock.release();
  held.clear();
}

/** "run R, pid P on H" when the holder has noted its run, else "a run starting, pid P on H". */
function runOf(dir: string, holder: string): string {
  try {
    const noted = JSON.parse(readFileSync(join(dir, RUN_FILE), "utf8")) as {
      run_id?: unknown;
      pid?: unknown;
    };
    if (typeof noted.run_id === "string" && holder.startsWith(`pid ${noted.pid} `))
      return `run ${noted.run_id}, ${holder}`;
  } catch {
    // Not noted yet: the run is starting.
  }
  return `a run starting, ${holder}`;
}
