/**
 * The CLI in a child process whose working directory is a temp folder the test owns (so nothing
 * lands in the repository), started from the same entry as `cli.ts` (`CLI_ENTRY`).
 *
 * @example
 *   const r = await runCliIn(dir, ["reconcile", "--yes", "--out", join(dir, "r1")], env);
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { type CliResult, collect, REPO_ROOT } from "./cli.ts";
import { CLI_ENTRY } from "./cli-entry.ts";

/** Node's arguments for the CLI from any working directory (tsx resolved from the repository). */
const ENTRY = CLI_ENTRY.map((a) => {
  if (a === "tsx") return import.meta.resolve("tsx");
  return a.endsWith(".ts") || a.endsWith(".js") ? join(REPO_ROOT, a) : a;
});

export function runCliIn(
  cwd: string,
  args: readonly string[],
  env: Record<string, string | undefined> = {},
): Promise<CliResult> {
  const child = spawn(process.execPath, [...ENTRY, ...args], {
    cwd,
    env: { ...process.env, CONTROLS_LOG_LEVEL: undefined, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return collect(child);
}
