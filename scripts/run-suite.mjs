#!/usr/bin/env node
/**
 * `npm test`'s runner: `node <args>` (the node:test command), with the suite's temporary files
 * (every PGlite test database is a copied folder of about a thousand files, every CLI child a
 * reports folder) on a tmpfs when `/dev/shm` is one with room to spare. Creating and removing
 * those files on a journalled disk cost the suite's processes a second of system CPU in twenty.
 * A `TMPDIR` already set is kept; without such a tmpfs nothing changes. The folder is removed
 * when the run ends, whatever its exit; the run's exit code (or signal) is this process's.
 *
 * @example
 *   node scripts/run-suite.mjs --test --test-concurrency=4 test/unit/*.test.js
 */
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, statfsSync } from "node:fs";

const TMPFS_MAGIC = 0x01021994;
/** Room the suite's temporary files need at most, four files at a time, with margin. */
const ROOM_BYTES = 4 * 1024 ** 3;

function tmpfsFolder() {
  if (process.env.TMPDIR) return undefined;
  try {
    const fs = statfsSync("/dev/shm");
    if (fs.type !== TMPFS_MAGIC || fs.bavail * fs.bsize < ROOM_BYTES) return undefined;
    const dir = mkdtempSync("/dev/shm/controls-migrate-suite-");
    // As /tmp is: tests run as root hand PostgreSQL's initdb a folder of the postgres account.
    chmodSync(dir, 0o1777);
    return dir;
  } catch {
    return undefined;
  }
}

const dir = tmpfsFolder();
const child = spawn(process.execPath, process.argv.slice(2), {
  stdio: "inherit",
  env: dir === undefined ? process.env : { ...process.env, TMPDIR: dir },
});
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("exit", (code, signal) => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  if (signal !== null) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else process.exit(code ?? 1);
});
