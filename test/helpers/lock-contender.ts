/**
 * A process that contends for a data-folder lock on command, for the lock race test. Reads lines
 * on stdin: `try DIR START_MS` (busy-waits until that instant, so several contenders start in the
 * same millisecond, then takes the lock and answers `held` or `refused MESSAGE`), `release`
 * (answers `released`) and `exit`.
 */
import { createInterface } from "node:readline";
import { acquireDataDirLock, type DataDirLock } from "../../src/db/connection/data-dir-lock.ts";

let lock: DataDirLock | undefined;
const say = (line: string) => process.stdout.write(`${line}\n`);
const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const [cmd, dir, start] = line.split(" ");
  if (cmd === "try") {
    while (Date.now() < Number(start)) {
      // spin: every contender leaves this loop in the same millisecond
    }
    try {
      lock = acquireDataDirLock(dir!, { updateMs: 60_000 });
      say("held");
    } catch (err) {
      say(`refused ${(err as Error).message.replace(/\n/g, " ")}`);
    }
  } else if (cmd === "release") {
    lock?.release();
    lock = undefined;
    say("released");
  } else if (cmd === "exit") {
    lock?.release();
    process.exit(0);
  }
});
say("ready");
