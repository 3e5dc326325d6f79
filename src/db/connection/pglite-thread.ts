/**
 * The main thread's side of the embedded database: PGlite runs in a worker thread
 * (`pglite-worker.ts`) and is reached by messages. PGlite executes PostgreSQL synchronously on
 * the thread it lives on; in the main thread a statement of a few hundred milliseconds would
 * hold back every timer and socket meanwhile, and a request granted by the rate budget would go
 * out late, bunched with the next ones. In its own thread it stalls nothing here.
 */
import { Worker } from "node:worker_threads";
import { databaseDiskFullError } from "../../disk-full.ts";
import type {
  PgErrorFields,
  PgliteThreadInit,
  ThreadErrorFields,
  ThreadReply,
  ThreadRequest,
} from "./pglite-thread-protocol.ts";

export interface PgliteThreadOptions {
  /** A data folder on disk; absent: in memory. */
  readonly dataDir?: string;
  /** A dump of a data folder (`dumpDataDir("none")`) to start from instead of initdb. */
  readonly loadDataDir?: Blob;
  /** Initial WebAssembly memory in bytes (PGlite's `initialMemory`). */
  readonly initialMemory?: number;
  /** PostgreSQL settings applied at start-up (`shared_buffers`, `work_mem`...). */
  readonly settings?: Readonly<Record<string, string>>;
}

/** A statement's result as PGlite gives it. */
export interface ThreadResult {
  readonly rows: Record<string, unknown>[];
  readonly affectedRows: number;
}

/**
 * `Error`, typed as holding PostgreSQL's error fields: `PgliteError` gets them as its own
 * properties without declaring each one again beside the protocol's list.
 */
const ErrorWithPgFields: new (message: string) => Error & PgErrorFields = Error;

/**
 * A statement refused by the embedded PostgreSQL, with its fields (`code` is the SQLSTATE), or the
 * database thread failing. Callers branch on `code`, as with node-postgres' `DatabaseError`.
 */
export class PgliteError extends ErrorWithPgFields {
  constructor(fields: ThreadErrorFields) {
    super(fields.message);
    this.name = "PgliteError";
    Object.assign(this, { ...fields, message: fields.message });
  }
}

interface Pending {
  readonly resolve: (r: ThreadResult) => void;
  readonly reject: (e: Error) => void;
}

/**
 * SQLSTATE classes of a statement's own failure, never a full disk's: data exceptions (22),
 * integrity (23), transaction rollbacks (40), syntax and access (42), invalid names (3D, 3F),
 * authorisation (28), unsupported features (0A), PL/pgSQL raises (P0).
 */
const STATEMENTS_OWN = /^(22|23|40|42|3D|3F|28|0A|P0)/;

/** How long a closing database thread may take before it is terminated. */
const CLOSE_TIMEOUT_MS = 60_000;

/**
 * The most parameters one statement may bind on PGlite. PGlite 0.4 answers a statement with more
 * (32,768 and up) with no rows and no error, and its session then answers every later statement
 * with no rows too: a run would conclude from reads that read nothing. Such a statement is
 * refused before it is sent, naming the count; the tool's bulk writes bind column arrays instead.
 */
export const PGLITE_MAX_PARAMETERS = 32_767;

/**
 * One PGlite database in a worker thread. Statements may be sent concurrently; they run one after
 * another, in the order sent. Transactions are the caller's affair (see the Kysely driver in
 * `pglite-thread-dialect.ts`, which hands its one connection to one holder at a time).
 *
 * The thread keeps the process alive only while a statement is outstanding, as a socket would.
 *
 * @example
 *   const thread = await PgliteThread.start({ dataDir: "/srv/cm/.data/pglite" });
 *   try { console.log((await thread.query("select 1 as one", [])).rows); }
 *   finally { await thread.close(); }
 */
export class PgliteThread {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #failure: Error | undefined;
  #closing: Promise<void> | undefined;
  #running = true;
  readonly #exited: Promise<void>;

  /** The data folder, whose disk is looked at when a statement fails (see `#refused`). */
  readonly #dataDir: string | undefined;

  /** The data folder the database lives in; undefined for one in memory. */
  get dataDir(): string | undefined {
    return this.#dataDir;
  }

  private constructor(worker: Worker, dataDir: string | undefined) {
    this.#worker = worker;
    this.#dataDir = dataDir;
    this.#exited = new Promise((resolve) =>
      worker.once("exit", () => {
        this.#running = false;
        resolve();
      }),
    );
    worker.on("message", (reply: ThreadReply) => this.#settle(reply));
    worker.on("error", (err) => this.#fail(`the embedded database thread failed: ${err.message}`));
    worker.on("messageerror", (err) => this.#fail(`unreadable answer: ${err.message}`));
    worker.on("exit", (code) => this.#fail(`the embedded database thread exited (code ${code})`));
  }

  /**
   * Starts the thread and opens PGlite in it. Rejects with PGlite's own error when the database
   * cannot be opened (the thread is gone by then).
   */
  static async start(options: PgliteThreadOptions = {}): Promise<PgliteThread> {
    const loadDataDir =
      options.loadDataDir === undefined
        ? undefined
        : new Uint8Array(await options.loadDataDir.arrayBuffer());
    const init: PgliteThreadInit = {
      ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
      ...(loadDataDir === undefined ? {} : { loadDataDir }),
      ...(options.initialMemory === undefined ? {} : { initialMemory: options.initialMemory }),
      settings: Object.entries(options.settings ?? {}),
    };
    const thread = new PgliteThread(spawnWorker(init, loadDataDir), options.dataDir);
    const ready = new Promise<ThreadResult>((resolve, reject) =>
      thread.#pending.set(0, { resolve, reject }),
    );
    try {
      await ready;
    } catch (err) {
      await thread.#worker.terminate();
      throw err;
    }
    thread.#worker.unref();
    return thread;
  }

  /** True once {@link close} began or the thread died. */
  get closed(): boolean {
    return this.#closing !== undefined || this.#failure !== undefined;
  }

  /** True until the worker thread has ended (and its memory is given back). */
  get running(): boolean {
    return this.#running;
  }

  /** Runs one statement (extended protocol: one statement, `$1` parameters). */
  query(sql: string, params: readonly unknown[]): Promise<ThreadResult> {
    if (this.#closing) return Promise.reject(new PgliteError({ message: "database closed" }));
    if (params.length > PGLITE_MAX_PARAMETERS) {
      return Promise.reject(
        new PgliteError({
          message: `a statement binds ${params.length} parameters, over PGlite's ${PGLITE_MAX_PARAMETERS}: not sent (PGlite would answer it and every later statement with no rows)`,
        }),
      );
    }
    return this.#send({ op: "query", id: this.#nextId++, sql, params: [...params] });
  }

  /** Closes PGlite and ends the thread; idempotent, and safe after the thread died. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#failure === undefined) {
        const timer = setTimeout(() => void this.#worker.terminate(), CLOSE_TIMEOUT_MS);
        timer.unref();
        try {
          await this.#send({ op: "close", id: this.#nextId++ });
        } finally {
          clearTimeout(timer);
        }
      }
      // PGlite is closed and its files are synced: nothing is lost by ending the thread now.
      await this.#worker.terminate();
      await this.#exited;
    })();
    return this.#closing;
  }

  #send(req: ThreadRequest): Promise<ThreadResult> {
    if (this.#failure) return Promise.reject(this.#failure);
    if (this.#pending.size === 0) this.#worker.ref();
    return new Promise((resolve, reject) => {
      this.#pending.set(req.id, { resolve, reject });
      this.#worker.postMessage(req);
    });
  }

  #settle(reply: ThreadReply): void {
    const p = this.#pending.get(reply.id);
    if (!p) return;
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0) this.#worker.unref();
    if ("error" in reply) p.reject(this.#refused(reply.error));
    else p.resolve({ rows: reply.rows, affectedRows: reply.affectedRows });
  }

  /**
   * A failed statement's error. PGlite never passes ENOSPC on: on a full disk PostgreSQL fails
   * with a follow-on error, so a failure that is not the statement's own (a constraint, a syntax
   * error, a conflict) on a data folder whose disk is nearly full names the folder and --data-dir.
   */
  #refused(fields: ThreadErrorFields): Error {
    const err = new PgliteError(fields);
    if (this.#dataDir === undefined || STATEMENTS_OWN.test(fields.code ?? "")) return err;
    return databaseDiskFullError(err, this.#dataDir) as Error;
  }

  #fail(message: string): void {
    if (this.#failure) return;
    this.#failure = new PgliteError({
      message: `The embedded database is not available: ${message}`,
    });
    for (const p of this.#pending.values()) p.reject(this.#failure);
    this.#pending.clear();
  }
}

/** The worker thread's young generation, in MB (see `spawnWorker`). */
const WORKER_YOUNG_GENERATION_MB = 8;

/**
 * The worker: the compiled `pglite-worker.js` next to this file (from a bundle in `dist/`, such as
 * `dist/cli.cjs`, at `dist/src/db/connection/`), or, run from the TypeScript sources (tests, `npm
 * run cli`), `pglite-worker.ts`, whose types node strips as it does the main thread's.
 */
function spawnWorker(init: PgliteThreadInit, transfer: Uint8Array | undefined): Worker {
  const self = import.meta.url;
  const entry = /\.[cm]js$/.test(self)
    ? new URL("./src/db/connection/pglite-worker.js", self)
    : new URL(`./pglite-worker.${self.endsWith(".ts") ? "ts" : "js"}`, self);
  return new Worker(entry, workerOptions(init, transfer));
}

function workerOptions(init: PgliteThreadInit, transfer: Uint8Array | undefined) {
  return {
    workerData: init,
    transferList: transfer ? [transfer.buffer as ArrayBuffer] : [],
    // The thread's JavaScript only carries statements and their rows across; V8's default young
    // generation (up to 3 × 16 MB) would sit mostly idle on top of PostgreSQL's own memory.
    resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
  };
}
