/**
 * Runs the CLI in a real pseudo-terminal (util-linux `script`), for what only a terminal shows:
 * --help wrapped to its width, the confirmation prompt, Ctrl-C (a byte 0x03 typed at the terminal,
 * turned into SIGINT or a readline interrupt by the terminal itself).
 *
 * @example
 *   const t = spawnInTty(["plan", "--help"], { cols: 80 });
 *   const { output } = await t.done;
 */
import { type ChildProcess, spawn } from "node:child_process";
import { REHEARSAL_ENV } from "./cli.ts";
import { CLI_ENTRY } from "./cli-entry.ts";
import { scratchCwd } from "./scratch-cwd.ts";

export interface TtyOptions {
  readonly cols?: number;
  readonly env?: Record<string, string | undefined>;
  /** What node runs instead of the CLI (`CLI_ENTRY`): e.g. a test's own script. */
  readonly entry?: readonly string[];
}

export interface TtyRun {
  readonly child: ChildProcess;
  /** Everything the terminal showed so far (stdout and stderr share it), `\r\n` as `\n`. */
  output(): string;
  /** Types into the terminal. */
  type(text: string): void;
  /** Resolves once the output matches. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** The CLI's exit code (script -e passes it on) and the whole output. */
  readonly done: Promise<{ code: number | null; output: string }>;
}

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** Starts `controls-migrate <args>` (see `CLI_ENTRY`) in a pseudo-terminal of `cols` columns. */
export function spawnInTty(args: readonly string[], options: TtyOptions = {}): TtyRun {
  const cli = [process.execPath, ...(options.entry ?? CLI_ENTRY), ...args].map(quote).join(" ");
  const command = `stty cols ${options.cols ?? 100} rows 50; exec ${cli}`;
  const child = spawn("script", ["-qfec", command, "/dev/null"], {
    cwd: scratchCwd(),
    env: { ...process.env, CONTROLS_LOG_LEVEL: undefined, ...REHEARSAL_ENV, ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let raw = "";
  const waiters: (() => void)[] = [];
  const onData = (d: Buffer) => {
    raw += d.toString("utf8");
    for (const w of waiters.splice(0)) w();
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  const output = () => raw.replaceAll("\r\n", "\n");
  const done = new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output: output() }));
  });
  return {
    child,
    output,
    type: (text) => child.stdin?.write(text),
    waitFor: (pattern, timeoutMs = 60_000) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(new Error(`timed out waiting for ${pattern}; terminal showed:\n${output()}`)),
          timeoutMs,
        );
        const check = () => {
          if (pattern.test(output())) {
            clearTimeout(timer);
            resolve();
          } else waiters.push(check);
        };
        check();
      }),
    done,
  };
}
