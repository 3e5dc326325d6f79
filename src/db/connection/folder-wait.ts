/**
 * Opening an embedded data folder that another process holds for a moment: wait a little for it
 * rather than refuse at once (`connect.ts` opens; `data-dir-lock.ts` is the lock).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { ExitCode, UserError } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import { acquireDataDirLock, type DataDirLock } from "./data-dir-lock.ts";

/**
 * How long an open waits for a data folder another process holds before it says so: a `status`,
 * `runs` or `show` with no run going holds it for a moment (open, read, close), and a run started
 * in that moment should not be refused for it.
 */
export const BUSY_WAIT_MS = 5_000;

/**
 * The folder's lock, waiting up to `waitMs` while another process holds it (said once, at info);
 * past that, the holder is named as before. A process that finds the folder taken over from it
 * exits: writing on would corrupt it.
 *
 * @example
 *   const lock = await lockWhenFree("/abs/.data/pglite", BUSY_WAIT_MS, logger);
 */
export async function lockWhenFree(
  dir: string,
  waitMs: number,
  logger: Logger,
): Promise<DataDirLock> {
  const deadline = Date.now() + waitMs;
  let said = false;
  for (;;) {
    try {
      return acquireDataDirLock(dir, {
        // Another process judged this one gone and took the folder over: writing on would corrupt it.
        onCompromised: (err) => {
          logger.error(err.message);
          process.exit(ExitCode.failed);
        },
      });
    } catch (err) {
      if (!(err instanceof UserError) || Date.now() >= deadline) throw err;
      if (!said) logger.info(`${err.message.split(". ")[0]}: waiting up to ${waitMs / 1000} s.`);
      said = true;
    }
    await sleep(200);
  }
}
