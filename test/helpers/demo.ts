/**
 * Runs `npm run demo` as npm runs it (`scripts/run-demo.mjs`, with `INIT_CWD` set to `cwd`): the
 * demo bundled by the build (`npm test` builds first), in a child process; its `.data/demo-*`
 * folder and reports land in `cwd`.
 *
 * @example
 *   const r = await runDemo(tempDir, ["--identities", "300", "--no-progress"]);
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type CliResult, collect } from "./cli.ts";

const DEMO = fileURLToPath(new URL("../../scripts/run-demo.mjs", import.meta.url));

export function runDemo(cwd: string, args: readonly string[]): Promise<CliResult> {
  const child = spawn(process.execPath, [DEMO, ...args], {
    cwd,
    env: { ...process.env, CONTROLS_LOG_LEVEL: undefined, INIT_CWD: cwd },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return collect(child);
}
