/**
 * A process that contends for a data-folder lock on command, for the lock race test. Reads lines
 * on stdin: `try DIR START_MS` (blocks until 5 ms before that instant, then busy-waits until it,
 * so several contenders start in the same millisecond, then takes the lock and answers `held` or
 * `refused MESSAGE`), `release` (answers `released`) and `exit`.
 */
import { createInterface } from "node:readline";
import { acquireDataDirLock, type DataDirLock } from "../../src/db/connection/data-dir-lock.ts";

let lock: DataDirLock | undefined;
/** What `Atomics.wait` blocks on: nothing ever notifies it, so it returns at its timeout. */
const asleep = new Int32Array(new SharedArrayBuffer(4));
/** Margin of the busy-wait: a blocked thread may wake a little late, a spinning one does not. */
const SPIN_MS = 5;
const say = (line: string) => process.stdout.write(`${line}\n`);
const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const [cmd, dir, start] = line.split(" ");
  if (cmd === "try") {
    // Block for most of the wait: spinning all of it cost the three contenders ~4 s of CPU a race.
    const early = Number(start) - Date.now() - SPIN_MS;
    if (early > 0) Atomics.wait(asleep, 0, 0, early);
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
