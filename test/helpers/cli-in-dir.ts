/**
 * The CLI in a child process whose working directory is a temp folder the test owns (so nothing
 * lands in the repository), started from the same entry as `cli.ts` (`CLI_ENTRY`).
 *
 * @example
 *   const r = await runCliIn(dir, ["reconcile", "--yes", "--out", join(dir, "r1")], env);
 */
import { spawn } from "node:child_process";
import { type CliResult, collect, REHEARSAL_ENV } from "./cli.ts";
import { CLI_ENTRY } from "./cli-entry.ts";

export function runCliIn(
  cwd: string,
  args: readonly string[],
  env: Record<string, string | undefined> = {},
): Promise<CliResult> {
  const child = spawn(process.execPath, [...CLI_ENTRY, ...args], {
    cwd,
    env: { ...process.env, CONTROLS_LOG_LEVEL: undefined, ...REHEARSAL_ENV, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return collect(child);
}
