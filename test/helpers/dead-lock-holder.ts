/**
 * A data-folder lock left by a process that died holding it: a child takes the lock of `dataDir`
 * (`acquireDataDirLock`) and kills itself with SIGKILL, so its lock file stays, naming its pid.
 *
 * @example
 *   lockHeldByDeadProcess(join(home, "data")); // `${dataDir}.lock` now names a gone pid
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";

const DATA_DIR_LOCK = new URL("../../src/db/connection/data-dir-lock.ts", import.meta.url).href;

/** Leaves `${dataDir}.lock` held by a process that is gone. */
export function lockHeldByDeadProcess(dataDir: string): void {
  const holder = spawnSync(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `const { acquireDataDirLock } = await import(${JSON.stringify(DATA_DIR_LOCK)});
       acquireDataDirLock(${JSON.stringify(dataDir)});
       process.kill(process.pid, "SIGKILL");`,
    ],
    { encoding: "utf8" },
  );
  assert.equal(holder.signal, "SIGKILL", holder.stderr);
}
