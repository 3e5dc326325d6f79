/**
 * The local channel of an embedded (PGlite) database, whose one process owns the data folder so
 * that `status`, `pause`, `continue` and `set-rate` from a second terminal cannot open it:
 *
 * - `<data-dir>.status.json`: the running writer rewrites it every second (temporary file, then
 *   rename: a reader never sees half of it) with what `status --json` prints, plus `written_at`.
 *   A file older than {@link STATUS_FRESH_MS} belongs to no live run.
 * - `<data-dir>.control/`: a folder (mode 0700) where a command drops one request file
 *   (`<id>.request.json`: the change, who asked, when); the running writer takes it within a poll,
 *   records it in the database exactly as PostgreSQL's channel does, and answers with
 *   `<id>.reply.json`. A request older than {@link REQUEST_MAX_AGE_MS} is dropped unanswered.
 *   `runs`, `show` and `report` ask the same way, and the writer answers with their output.
 *
 * Neither holds a secret: run ids, counts, rates, `user@host` and pids only.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { dataDirHolderAlive } from "../../db/connection/data-dir-lock.ts";
import type { ControlChange, Requester } from "../../db/journal/run-control-queries.ts";
import { writeFileAtomic } from "../../reports/report-files.ts";
import type { ReadRequest } from "./read-commands.ts";

/** A status file written longer ago than this belongs to no live run (it is rewritten every 1 s). */
export const STATUS_FRESH_MS = 5_000;
/** A request nobody took within this long is stale: a later run must not act on it. */
const REQUEST_MAX_AGE_MS = 10_000;

/** One request of a steering command, or of a read command (`runs`, `show`, `report`). */
export interface LocalRequest {
  readonly id: string;
  /** The run it is meant for; undefined: whichever run is going. */
  readonly runId?: string;
  /** A steering change; absent for a read. */
  readonly change?: ControlChange;
  /** A read command the writer answers from its database (PGlite allows one process). */
  readonly read?: ReadRequest;
  readonly by: Requester;
  /** Epoch ms, the requester's clock. */
  readonly at: number;
}

/** The running process's answer. */
export interface LocalReply {
  readonly ok: boolean;
  readonly message: string;
  /** The run's status once the change was applied (what `status --json` prints). */
  readonly status?: Record<string, unknown>;
  /** A read command's output, printed by the requester on its stdout. */
  readonly stdout?: string;
}

/** Where the channel of a data folder lives. */
export function localChannelPaths(dataDir: string): { statusFile: string; controlDir: string } {
  const base = resolve(dataDir);
  return { statusFile: `${base}.status.json`, controlDir: `${base}.control` };
}

/**
 * The running writer's end: rewrites the status file, takes requests, answers them.
 *
 * @example
 *   const channel = new LocalChannel(".data/pglite");
 *   for (const r of channel.takeRequests()) await channel.reply(r, { ok: true, message: "paused" });
 */
export class LocalChannel {
  readonly statusFile: string;
  readonly controlDir: string;

  constructor(dataDir: string) {
    ({ statusFile: this.statusFile, controlDir: this.controlDir } = localChannelPaths(dataDir));
    mkdirSync(this.controlDir, { recursive: true, mode: 0o700 });
  }

  /** Replaces the status file with `status` and the time it was written. */
  async writeStatus(status: Record<string, unknown>): Promise<void> {
    const body = { ...status, written_at: new Date().toISOString() };
    await writeFileAtomic(this.statusFile, `${JSON.stringify(body, null, 2)}\n`);
  }

  /**
   * The run stopped writing: its status file goes, so that `status` reads the database (whose
   * final word, completed or failed, the run writes next) rather than a view that stays "running",
   * and so does the request folder once empty (a request still in it is left for its sender to
   * clean up).
   */
  close(): void {
    rmSync(this.statusFile, { force: true });
    try {
      rmdirSync(this.controlDir);
    } catch {
      // Not empty, or already gone.
    }
  }

  /**
   * The requests waiting, oldest first; each is removed as it is read, so it is taken once.
   * Stale or unreadable ones are removed too, and reported as `dropped`.
   */
  takeRequests(now = Date.now()): { requests: LocalRequest[]; dropped: string[] } {
    const requests: LocalRequest[] = [];
    const dropped: string[] = [];
    let names: string[];
    try {
      names = readdirSync(this.controlDir).filter((n) => n.endsWith(".request.json"));
    } catch {
      return { requests, dropped };
    }
    for (const name of names.sort()) {
      const path = join(this.controlDir, name);
      let request: LocalRequest | undefined;
      try {
        request = JSON.parse(readFileSync(path, "utf8")) as LocalRequest;
      } catch {
        request = undefined;
      }
      rmSync(path, { force: true });
      if (!request || typeof request.at !== "number" || now - request.at > REQUEST_MAX_AGE_MS) {
        dropped.push(name);
      } else requests.push(request);
    }
    return { requests, dropped };
  }

  async reply(request: LocalRequest, reply: LocalReply): Promise<void> {
    await writeFileAtomic(replyPath(this.controlDir, request.id), JSON.stringify(reply));
  }
}

const requestPath = (dir: string, id: string) => join(dir, `${id}.request.json`);
const replyPath = (dir: string, id: string) => join(dir, `${id}.reply.json`);

/**
 * The status file of a data folder if a live run wrote it lately (within {@link STATUS_FRESH_MS})
 * and still holds the folder's lock, else undefined.
 *
 * @example
 *   const live = readFreshStatus(".data/pglite"); // { run_id, mode, status, actions, ... }
 */
export function readFreshStatus(
  dataDir: string,
  now = Date.now(),
): Record<string, unknown> | undefined {
  try {
    const status = JSON.parse(readFileSync(localChannelPaths(dataDir).statusFile, "utf8"));
    const written = Date.parse(String(status.written_at));
    // Fresh, and its writer still holds the folder (one killed a moment ago left the file).
    return now - written <= STATUS_FRESH_MS && dataDirHolderAlive(dataDir) ? status : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A command's end: drops a request and waits up to `timeoutMs` for the running process's reply,
 * or until that process is gone (`dataDirHolderAlive`, every half second). Undefined when nobody
 * answered (the request is then withdrawn).
 *
 * @example
 *   const reply = await sendLocalRequest(dataDir, { change: { kind: "pause" }, by }, 5000);
 */
export async function sendLocalRequest(
  dataDir: string,
  request: Omit<LocalRequest, "id" | "at">,
  timeoutMs: number,
): Promise<LocalReply | undefined> {
  const { controlDir } = localChannelPaths(dataDir);
  mkdirSync(controlDir, { recursive: true, mode: 0o700 });
  const id = `${Date.now()}-${process.pid}-${randomBytes(4).toString("hex")}`;
  await writeFileAtomic(
    requestPath(controlDir, id),
    JSON.stringify({ ...request, id, at: Date.now() } satisfies LocalRequest),
  );
  const deadline = Date.now() + timeoutMs;
  try {
    for (let poll = 0; Date.now() < deadline; poll++) {
      try {
        return JSON.parse(readFileSync(replyPath(controlDir, id), "utf8")) as LocalReply;
      } catch {
        // A writer that died (killed, or a forced exit) left its status file: nobody will answer.
        if (poll % 5 === 4 && !dataDirHolderAlive(dataDir)) return undefined;
        await sleep(100);
      }
    }
    return undefined;
  } finally {
    rmSync(requestPath(controlDir, id), { force: true });
    rmSync(replyPath(controlDir, id), { force: true });
  }
}
