/**
 * Reading `--client-secret-file`, a file the tool did not write, within bounds: it must be a
 * regular file (not /dev/zero, a FIFO, a socket or a folder), it is opened without blocking (a FIFO
 * with no writer cannot hang `open`), at most `MAX_SECRET_FILE_BYTES` are read, and the CLI reads it
 * with a timeout and while listening for SIGINT/SIGTERM.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import { open } from "node:fs/promises";

/** A client secret is tens of bytes; a file larger than this is not one. */
export const MAX_SECRET_FILE_BYTES = 4096;

/** How long the CLI waits for the secret file to be read (a hung network mount, say). */
export const SECRET_READ_TIMEOUT_MS = 2000;

/** The secret (trimmed), or the problem that names the flag and the file. */
export type SecretFileResult = { readonly secret: string } | { readonly problem: string };

const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOCTTY ?? 0);

const named = (path: string) => `--client-secret-file ${path}`;

function kindOf(st: Stats): string {
  if (st.isDirectory()) return "a folder";
  if (st.isFIFO()) return "a FIFO (named pipe)";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  if (st.isSocket()) return "a socket";
  return "not a regular file";
}

/** The problem with what `fstat` says, or undefined for a regular file of a fitting size. */
function statProblem(path: string, st: Stats): string | undefined {
  if (!st.isFile())
    return `${named(path)} is ${kindOf(st)}, not a regular file; put the secret in a file of its own.`;
  if (st.size > MAX_SECRET_FILE_BYTES)
    return `${named(path)} holds ${st.size} bytes, more than a client secret's ${MAX_SECRET_FILE_BYTES}; is it the right file?`;
  return undefined;
}

function fromBytes(path: string, bytes: Buffer, n: number): SecretFileResult {
  if (n > MAX_SECRET_FILE_BYTES)
    return {
      problem: `${named(path)} holds more than ${MAX_SECRET_FILE_BYTES} bytes, more than a client secret; is it the right file?`,
    };
  const secret = bytes.subarray(0, n).toString("utf8").trim();
  return secret ? { secret } : { problem: `${named(path)} is empty.` };
}

const cannot = (path: string, err: unknown): SecretFileResult => ({
  problem: `${named(path)} cannot be read: ${(err as NodeJS.ErrnoException).code ?? "error"}.`,
});

/**
 * Reads the secret file synchronously (for a caller that cannot wait: tests, the library API). No
 * timeout, but never blocks on a FIFO or a device, and never reads more than the cap.
 *
 * @example
 *   readSecretFileSync("/run/secrets/client") // { secret: "..." }
 */
export function readSecretFileSync(path: string): SecretFileResult {
  let fd: number;
  try {
    fd = openSync(path, FLAGS);
  } catch (err) {
    return cannot(path, err);
  }
  try {
    const problem = statProblem(path, fstatSync(fd));
    if (problem) return { problem };
    const bytes = Buffer.alloc(MAX_SECRET_FILE_BYTES + 1);
    let n = 0;
    for (let got = -1; got !== 0 && n < bytes.length; n += got)
      got = readSync(fd, bytes, n, bytes.length - n, null);
    return fromBytes(path, bytes, n);
  } catch (err) {
    return cannot(path, err);
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads the secret file in the background, giving up after `timeoutMs` or when `signal` aborts.
 *
 * @example
 *   const r = await readSecretFile(path, SECRET_READ_TIMEOUT_MS, signal);
 */
export async function readSecretFile(
  path: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<SecretFileResult> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<SecretFileResult>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          problem: `${named(path)} could not be read within ${timeoutMs} ms; is it on a mount that hangs?`,
        }),
      timeoutMs,
    );
    onAbort = () => resolve({ problem: `${named(path)}: reading it was interrupted.` });
    signal?.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([readInBackground(path), stop]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
}

async function readInBackground(path: string): Promise<SecretFileResult> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, FLAGS);
  } catch (err) {
    return cannot(path, err);
  }
  try {
    const problem = statProblem(path, await handle.stat());
    if (problem) return { problem };
    const bytes = Buffer.alloc(MAX_SECRET_FILE_BYTES + 1);
    let n = 0;
    for (let got = -1; got !== 0 && n < bytes.length; n += got)
      got = (await handle.read(bytes, n, bytes.length - n, null)).bytesRead;
    return fromBytes(path, bytes, n);
  } catch (err) {
    return cannot(path, err);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

const preloaded = new Map<string, SecretFileResult>();

/**
 * Reads `--client-secret-file` ahead, with the timeout and the signal, so that the (synchronous)
 * config loading finds it read. Does nothing when the flag is absent.
 *
 * @example
 *   await preloadSecretFile(argv["client-secret-file"], signal);
 */
export async function preloadSecretFile(path: unknown, signal?: AbortSignal): Promise<void> {
  if (typeof path !== "string" || path === "" || preloaded.has(path)) return;
  preloaded.set(path, await readSecretFile(path, SECRET_READ_TIMEOUT_MS, signal));
}

/** The secret file's content: as preloaded, else read now (bounded, without the timeout). */
export function secretFromFile(path: string): SecretFileResult {
  return preloaded.get(path) ?? readSecretFileSync(path);
}
