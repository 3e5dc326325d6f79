/**
 * Runs `controls-sandbox` (the package's bin) as a child process (the way benchmarks and chaos
 * tests use it) and reads the JSON line it prints once ready. Children run in the package folder.
 *
 * @example
 *   const proc = await spawnSandbox(["--port", "0", "--identities", "1000"]);
 *   await fetch(`${proc.info.admin_url}/stats`);
 *   const code = await proc.stop("SIGTERM"); // 0
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The sandbox package's folder, the children's working folder. */
export const SANDBOX_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BIN = fileURLToPath(new URL("../../bin/controls-sandbox.js", import.meta.url));

export interface SandboxInfo {
  api_url: string;
  token_url: string;
  admin_url: string;
  client_id: string;
  client_secret: string;
  read_only_client_id: string;
  read_only_client_secret: string;
}

export interface SandboxProcess {
  readonly child: ChildProcess;
  readonly info: SandboxInfo;
  /** Everything written to stdout so far, the JSON line included. */
  stdout(): string;
  stderr(): string;
  /** Sends the signal and resolves with the exit code (null if killed by a signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cliArgs(args: readonly string[]): string[] {
  return [BIN, ...args];
}

/** Runs `controls-sandbox` to completion (for refusals and --help); killed after `timeoutMs`. */
export function runSandboxCli(args: readonly string[], timeoutMs = 60_000): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, cliArgs(args), {
      cwd: SANDBOX_ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Starts `controls-sandbox <args>` and waits for its JSON line; kills the child if it never comes. */
export function spawnSandbox(
  args: readonly string[],
  readyTimeoutMs = 60_000,
): Promise<SandboxProcess> {
  return spawnReady(cliArgs(args), SANDBOX_ROOT, readyTimeoutMs);
}

/**
 * Starts `node <nodeArgs>` in `cwd`, a program that prints the sandbox's JSON line once ready (the
 * bin, or a script serving through it), and waits for that line; kills the child if it never comes.
 */
export function spawnReady(
  nodeArgs: readonly string[],
  cwd: string,
  readyTimeoutMs = 60_000,
): Promise<SandboxProcess> {
  const child = spawn(process.execPath, [...nodeArgs], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const exited = new Promise<number | null>((resolve) =>
    child.on("close", (code) => resolve(code)),
  );
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`sandbox not ready after ${readyTimeoutMs} ms; stderr:\n${stderr}`));
    }, readyTimeoutMs);
    child.on("error", reject);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`sandbox exited with ${code} before it was ready; stderr:\n${stderr}`));
    });
    child.stdout.on("data", (d) => {
      const before = stdout;
      stdout += d;
      const nl = stdout.indexOf("\n");
      if (nl < 0 || before.includes("\n")) return;
      clearTimeout(timer);
      try {
        const info = JSON.parse(stdout.slice(0, nl)) as SandboxInfo;
        resolve({
          child,
          info,
          stdout: () => stdout,
          stderr: () => stderr,
          stop: (signal = "SIGTERM") => {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            return exited;
          },
        });
      } catch (err) {
        child.kill("SIGKILL");
        reject(err);
      }
    });
  });
}
