import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { CLI_ENTRY } from "./cli-entry.ts";

export { MODULE_CLI_ENTRY } from "./cli-entry.ts";

import { scratchCwd } from "./scratch-cwd.ts";

/**
 * The env every CLI child starts with, under the test's own. A sandbox's legacy fields equal its
 * seeded flags and it migrates nothing unless started with `autoMigrateRate`: tests that are not
 * about the three-way wait rehearse a platform that does not migrate by itself, so the tool
 * creates what is missing at once (`--no-wait-for-platform`). Tests of the wait set
 * `CONTROLS_WAIT_FOR_PLATFORM` themselves.
 */
export const REHEARSAL_ENV: Readonly<Record<string, string>> = Object.freeze({
  CONTROLS_WAIT_FOR_PLATFORM: "false",
});

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Starts the CLI in a child process (see `CLI_ENTRY`), with stdin closed (no TTY), in this test
 * process's scratch folder (see `scratchCwd`), so defaults such as `reports/` never land in the
 * checkout.
 */
export function spawnCli(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
  entry: readonly string[] = CLI_ENTRY,
): ChildProcess {
  return spawn(process.execPath, [...entry, ...args], {
    cwd: scratchCwd(),
    env: { ...process.env, CONTROLS_LOG_LEVEL: undefined, ...REHEARSAL_ENV, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

export function collect(child: ChildProcess): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => {
    stdout += d;
  });
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Runs the CLI to completion. */
export function runCli(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
  entry: readonly string[] = CLI_ENTRY,
): Promise<CliResult> {
  return collect(spawnCli(args, env, entry));
}
