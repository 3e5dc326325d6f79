/**
 * The working folder of every CLI child a test starts: a temporary folder owned by this test
 * process and removed at its exit. A child that falls back on a default relative path (the
 * `reports/` run folders, `.data/pglite`) writes there, never in the checkout.
 *
 * @example
 *   spawn(process.execPath, [...CLI_ENTRY, "plan"], { cwd: scratchCwd() });
 */
import { tempDir } from "./temp-dir.ts";

let folder: string | undefined;

/** The per-process scratch folder (made on first use, removed when the process exits). */
export function scratchCwd(): string {
  folder ??= tempDir("cm-test-cwd-");
  return folder;
}
