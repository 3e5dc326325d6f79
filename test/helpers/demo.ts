/**
 * Runs `npm run demo`'s script (`scripts/demo.ts`: the sandbox through the workspace, the CLI's
 * pipeline) in a child process, in `cwd`, where its `.data/demo-*` folder and reports land.
 *
 * @example
 *   const r = await runDemo(tempDir, ["--identities", "300", "--no-progress"]);
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type CliResult, collect } from "./cli.ts";

const DEMO = fileURLToPath(new URL("../../scripts/demo.ts", import.meta.url));

export function runDemo(cwd: string, args: readonly string[]): Promise<CliResult> {
  const child = spawn(process.execPath, ["--import", import.meta.resolve("tsx"), DEMO, ...args], {
    cwd,
    env: { ...process.env, CONTROLS_LOG_LEVEL: undefined },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return collect(child);
}
