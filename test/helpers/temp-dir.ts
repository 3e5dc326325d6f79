/**
 * A temporary folder for one test's files, removed when the test process exits, whatever the
 * test's end: `npm test`'s runner fails a run that leaves anything in its TMPDIR.
 *
 * @example
 *   const file = join(tempDir("cm-csv-"), "diff.csv");
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made: string[] = [];

/** A new folder under TMPDIR named `prefix` and six random characters. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (made.length === 0) {
    process.once("exit", () => {
      for (const d of made) rmSync(d, { recursive: true, force: true });
    });
  }
  made.push(dir);
  return dir;
}
