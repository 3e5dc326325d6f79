import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { CLI_ENTRY } from "./cli-entry.ts";
import { scratchCwd } from "./scratch-cwd.ts";

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
): ChildProcess {
  return spawn(process.execPath, [...CLI_ENTRY, ...args], {
    cwd: scratchCwd(),
    env: { ...process.env, CONTROLS_LOG_LEVEL: undefined, ...env },
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
): Promise<CliResult> {
  return collect(spawnCli(args, env));
}
