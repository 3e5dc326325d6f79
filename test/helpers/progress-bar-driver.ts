/**
 * Drives the CLI's progress bar (`createProgress` on a terminal) for a pseudo-terminal test: an
 * apply phase estimated at 300 writes, whose budget in force is 40 requests/s, starts with a burst
 * of 500 done at once; each line typed sets the budget to that number and counts one more done;
 * `q` stops the bar and ends.
 *
 * @example
 *   spawnInTty([], { entry: ["test/helpers/progress-bar-driver.ts"] });
 */
import { createInterface } from "node:readline";
import { createLogger } from "../../src/log.ts";
import { createProgress } from "../../src/migration/steer/progress.ts";

let budget = 40;
const progress = createProgress({
  enabled: true,
  logger: createLogger({ level: "info" }),
  tty: true,
});
progress.start("apply", 300, { rateCap: () => budget });
progress.tick(500);
const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  if (line.trim() === "q") {
    progress.stop();
    lines.close();
    return;
  }
  budget = Number(line);
  progress.tick(1);
});
