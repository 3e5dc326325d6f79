/**
 * The single-process lock of an embedded PGlite data folder. PGlite has no postmaster and no lock
 * of its own: two processes opening the same folder silently corrupt it.
 *
 * The scheme follows proper-lockfile's: the lock is a `<dataDir>.lock` file created atomically
 * (written aside, then hard-linked into place), and its holder keeps it fresh by touching its mtime
 * (a heartbeat). A lock whose mtime is older than the stale age is abandoned, whoever wrote it:
 * that is what works across containers sharing a folder, which cannot see each other's pids. A
 * holder in this very pid namespace whose process is gone (SIGKILL) is abandoned at once.
 *
 * Taking over an abandoned lock is atomic. Every lock file carries a token; to replace the lock of
 * token T, a process must first create `<dataDir>.lock.T.takeover` exclusively, so only one process
 * replaces a given holder. The winner checks the lock still holds T, renames its own lock file over
 * it, removes the claim, and reads the lock back to confirm it is its own. A process that comes late
 * for T either fails to claim it or finds another token there, and starts over.
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  fstatSync,
  linkSync,
  lstatSync,
  openSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { hostname } from "node:os";
import { resolve } from "node:path";
import { UserError } from "../../errors.ts";

/** A held lock; `release()` is idempotent. */
export interface DataDirLock {
  readonly path: string;
  release(): void;
}

export interface DataDirLockOptions {
  /** A lock file untouched for this long is abandoned (default 60 s: PGlite can block a while). */
  readonly staleMs?: number;
  /** How often the holder touches its lock file (default 10 s). */
  readonly updateMs?: number;
  /**
   * Called when the holder finds its lock gone or taken over (it was judged abandoned): going on
   * would let two processes write the folder. Default: throw, as proper-lockfile does.
   */
  readonly onCompromised?: (error: Error) => void;
  /** The refusal when another process holds the lock (default: the embedded database's). */
  readonly inUse?: (holder: string, refreshedS: number) => string;
}

interface Holder {
  readonly token: string;
  readonly pid: number;
  readonly host: string;
  /** Where `pid` means something: the kernel boot and the pid namespace. */
  readonly ns: string;
}

interface Seen {
  readonly holder: Holder | undefined;
  readonly mtimeMs: number;
  /** Names this holder, for the takeover claim: its token, or the file's identity. */
  readonly generation: string;
}

const DEFAULT_STALE_MS = 60_000;
const DEFAULT_UPDATE_MS = 10_000;
const ATTEMPTS = 50;

/**
 * Takes the lock of `dataDir`, or throws a `UserError` saying which process holds it.
 *
 * @example
 *   const lock = acquireDataDirLock("/abs/.data/pglite");
 *   try { ... } finally { lock.release(); }
 */
export function acquireDataDirLock(dataDir: string, options: DataDirLockOptions = {}): DataDirLock {
  const path = `${dataDir}.lock`;
  const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
  const me: Holder = {
    token: randomBytes(12).toString("hex"),
    pid: process.pid,
    host: hostname(),
    ns: namespaceId(),
  };
  const content = `${JSON.stringify(me)}\n`;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    // Written aside, then linked or renamed into place: the lock never appears half-written.
    const tmp = `${path}.${me.token}.tmp`;
    writeFileSync(tmp, content);
    try {
      try {
        linkSync(tmp, path);
        return hold(path, me, options);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
      const seen = readLock(path);
      if (!seen) continue; // released meanwhile
      if (!isAbandoned(seen, me, staleMs)) throw inUse(dataDir, seen, me, options.inUse);
      if (takeOver(path, seen, tmp, staleMs) && readLock(path)?.holder?.token === me.token) {
        return hold(path, me, options);
      }
    } finally {
      rmSync(tmp, { force: true });
    }
    pause(2 + attempt);
  }
  throw new UserError(
    `Could not take the lock ${path}; remove it if no controls-migrate is running.`,
  );
}

/** Replaces the abandoned lock `seen` by `tmp`, if this process wins the claim on it. */
function takeOver(path: string, seen: Seen, tmp: string, staleMs: number): boolean {
  const claim = `${path}.${seen.generation}.takeover`;
  try {
    linkSync(tmp, claim);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    // Another process is replacing this holder; a claim left by one that died meanwhile expires.
    if (ageMs(claim) > staleMs) rmSync(claim, { force: true });
    return false;
  }
  try {
    if (readLock(path)?.generation !== seen.generation) return false;
    renameSync(tmp, path);
    return true;
  } finally {
    rmSync(claim, { force: true });
  }
}

function hold(path: string, me: Holder, options: DataDirLockOptions): DataDirLock {
  const onCompromised =
    options.onCompromised ??
    ((error: Error) => {
      throw error;
    });
  let held = true;
  const heartbeat = setInterval(() => {
    const seen = readLock(path);
    if (seen?.holder?.token !== me.token) {
      clearInterval(heartbeat);
      held = false;
      onCompromised(
        new Error(
          `The lock ${path} was taken over by another process (it judged this one gone: its lock file was not touched for too long). Stopping: two processes must never write one embedded database.`,
        ),
      );
      return;
    }
    try {
      const now = new Date();
      utimesSync(path, now, now);
    } catch {
      // Checked again at the next beat.
    }
  }, options.updateMs ?? DEFAULT_UPDATE_MS);
  heartbeat.unref();
  return {
    path,
    release() {
      if (!held) return;
      held = false;
      clearInterval(heartbeat);
      if (readLock(path)?.holder?.token === me.token) rmSync(path, { force: true });
    },
  };
}

/**
 * False when `dataDir`'s lock shows that no process holds the folder: no lock file, a lock
 * untouched for the stale time, or a holder that no longer runs on this machine. A process waiting
 * on the holder (a read command asking the running writer through the local channel) stops waiting
 * once it is gone, rather than for its whole timeout.
 *
 * @example
 *   if (!dataDirHolderAlive("/abs/.data/pglite")) return undefined; // nobody will answer
 */
export function dataDirHolderAlive(dataDir: string, staleMs = DEFAULT_STALE_MS): boolean {
  const seen = readLock(`${resolve(dataDir)}.lock`);
  if (!seen) return false;
  const me: Holder = { token: "", pid: process.pid, host: hostname(), ns: namespaceId() };
  return !isAbandoned(seen, me, staleMs);
}

function isAbandoned(seen: Seen, me: Holder, staleMs: number): boolean {
  if (Date.now() - seen.mtimeMs > staleMs) return true;
  const h = seen.holder;
  // A pid means something only in the namespace it was read in.
  return h !== undefined && h.ns === me.ns && h.pid !== me.pid && !isAlive(h.pid);
}

function inUse(
  dataDir: string,
  seen: Seen,
  me: Holder,
  say?: DataDirLockOptions["inUse"],
): UserError {
  const h = seen.holder;
  if (h && h.ns === me.ns && h.pid === me.pid) {
    return new UserError(
      `The embedded database in ${dataDir} is already open in this process; close the first handle before opening another.`,
    );
  }
  const who = h ? `pid ${h.pid} on ${h.host}` : "another process";
  const age = Math.round((Date.now() - seen.mtimeMs) / 1000);
  if (say) return new UserError(say(who, age));
  return new UserError(
    `The embedded database in ${dataDir} is in use by another process (${who}; its lock was refreshed ${age} s ago). PGlite serves one process at a time: wait for it to finish (controls-migrate status says what it runs), or use PostgreSQL with --database-url (env DATABASE_URL). Another --data-dir is another tool database that knows nothing of this one's runs: never point a second writer at the same platform from it.`,
  );
}

function readLock(path: string): Seen | undefined {
  // The content and the mtime must come from the same file: stat() then readFile() by name can
  // pair an abandoned lock's old mtime with the fresh content of the process that just replaced
  // it, and that fresh lock would then be judged abandoned and taken over a second time.
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  let text: string;
  let st: { mtimeMs: number; ino: number };
  try {
    st = fstatSync(fd);
    text = readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
  const holder = parseHolder(text);
  const generation = holder?.token ?? `file-${st.ino}-${Math.floor(st.mtimeMs)}`;
  return { holder, mtimeMs: st.mtimeMs, generation: generation.replace(/[^a-zA-Z0-9-]/g, "") };
}

/** The holder a lock file names: this version's JSON, or an older version's bare pid. */
function parseHolder(text: string): Holder | undefined {
  try {
    const o = JSON.parse(text) as Partial<Holder>;
    if (typeof o === "object" && o && typeof o.token === "string" && Number.isInteger(o.pid)) {
      return { token: o.token, pid: o.pid!, host: String(o.host ?? "?"), ns: String(o.ns ?? "") };
    }
    if (typeof o === "number" && Number.isInteger(o) && o > 0) {
      // An older controls-migrate wrote only its pid, always on this machine.
      return { token: `pid-${o}`, pid: o, host: hostname(), ns: namespaceId() };
    }
  } catch {
    // unreadable: judged by its age alone
  }
  return undefined;
}

let namespace: string | undefined;

/** The kernel boot and pid namespace of this process (Linux), else the host name. */
function namespaceId(): string {
  namespace ??= (() => {
    try {
      const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
      return `${boot}/${readlinkSync("/proc/self/ns/pid")}`;
    } catch {
      return `host:${hostname()}`;
    }
  })();
  return namespace;
}

function ageMs(path: string): number {
  try {
    return Date.now() - lstatSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** A short synchronous pause (opening the database is synchronous up to here). */
function pause(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}
