/**
 * The embedded database's own thread. PGlite runs PostgreSQL as WebAssembly, synchronously: every
 * statement holds the thread it runs on for its whole duration. Here that thread is a
 * `node:worker_threads` Worker, so the main thread stays free to send requests at the moment the
 * rate budget grants them. The main side (`pglite-thread.ts`) sends one statement at a time;
 * this side runs it and answers with the rows or with the error's PostgreSQL fields.
 *
 * PGlite's own worker mode (`@electric-sql/pglite/worker`) is written for browser Web Workers
 * (`navigator.locks`, `BroadcastChannel`, `self.addEventListener`) and does not run under Node.
 */
import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import {
  type ParserOptions,
  PGlite,
  type PGliteOptions,
  type Results,
  types,
} from "@electric-sql/pglite";
import { setV8Flag } from "../../v8-flags.ts";
import {
  PG_ERROR_FIELDS,
  type PgliteThreadInit,
  type ThreadErrorFields,
  type ThreadReply,
  type ThreadRequest,
} from "./pglite-thread-protocol.ts";

if (!parentPort) throw new Error("pglite-worker.ts runs as a worker thread only");
const port: MessagePort = parentPort;
const init = workerData as PgliteThreadInit;

function errorFields(err: unknown): ThreadErrorFields {
  const e = (typeof err === "object" && err !== null ? err : {}) as Record<string, unknown>;
  const out: Record<string, string> = {
    message: typeof e.message === "string" ? e.message : String(err),
  };
  for (const k of PG_ERROR_FIELDS) if (typeof e[k] === "string") out[k] = e[k] as string;
  return out as unknown as ThreadErrorFields;
}

function options(): PGliteOptions {
  const o: PGliteOptions = {};
  if (init.dataDir !== undefined) o.dataDir = init.dataDir;
  if (init.loadDataDir !== undefined) o.loadDataDir = new Blob([init.loadDataDir]);
  if (init.initialMemory !== undefined) o.initialMemory = init.initialMemory;
  if (init.settings.length > 0) {
    // PostgreSQL's -c flags after PGlite's own defaults: the last setting of a name wins.
    o.startParams = [
      ...PGlite.defaultStartParams,
      ...init.settings.flatMap(([k, v]) => ["-c", `${k}=${v}`]),
    ];
  }
  return o;
}

/**
 * Keeps PostgreSQL's WebAssembly on V8's baseline compiler (Liftoff). By default V8 recompiles
 * hot functions with its optimizing compiler on background threads, and PostgreSQL's largest
 * functions (the expression interpreter, the parser) each take tens of MB of compiler memory to
 * do so: heaptrack put that at 58–77 MB of a 100,000-identity plan's 90–108 MB of native heap,
 * and a 1,000,000-identity plan peaked 50–70 MB lower without it, in the same wall time (the
 * listing is what a plan waits for) and with less CPU. Process-wide flags, set before the module
 * is compiled: V8 reads them when it compiles a module. Functions Liftoff cannot compile still
 * go to the optimizing compiler, so nothing fails for it.
 */
function baselineWasmOnly(): void {
  setV8Flag("wasm-dynamic-tiering", false);
  setV8Flag("wasm-tier-up", false);
}

type Parser = ParserOptions[number];
type ArrayParsers = Readonly<Record<number, Parser>>;

/**
 * PGlite copies its instance's parser table into a new object for every statement's result
 * (`{ ...this.parsers, ...options.parsers }` in its `parseResults`). Once open, that table holds
 * a parser for each of PostgreSQL's array types besides the 23 scalar ones, 333 entries, and the
 * copy was up to a third of a small statement's time (measured, two runs of 3,000 statements:
 * 261–276 µs a statement with it, 195–221 µs without). So the instance keeps the scalar parsers,
 * which PGlite also falls back to by itself, and array columns are parsed here, after, by PGlite's
 * own array parsers (which find their element's parser in the instance's table: nothing changes).
 */
function moveArrayParsers(pglite: PGlite): ArrayParsers {
  const scalar: Record<string, Parser> = {};
  const arrays: Record<string, Parser> = {};
  for (const [oid, parse] of Object.entries(pglite.parsers)) {
    (oid in types.parsers ? scalar : arrays)[oid] = parse;
  }
  pglite.parsers = scalar;
  return arrays;
}

/** A result's array columns parsed, as PGlite would with its whole table; nulls stay null. */
function parseArrayColumns(r: Results<Record<string, unknown>>, arrays: ArrayParsers) {
  if (!r.fields.some((f) => arrays[f.dataTypeID] !== undefined)) return r.rows;
  // A row keeps the last of the columns sharing a name, as PGlite builds it.
  const typeOf = new Map(r.fields.map((f) => [f.name, f.dataTypeID]));
  const columns = [...typeOf].filter(([, oid]) => arrays[oid] !== undefined);
  for (const row of r.rows) {
    for (const [name, oid] of columns) {
      const text = row[name];
      if (typeof text === "string") row[name] = (arrays[oid] as Parser)(text);
    }
  }
  return r.rows;
}

async function open(): Promise<PGlite | undefined> {
  try {
    baselineWasmOnly();
    const pglite = new PGlite(options());
    await pglite.waitReady;
    port.postMessage({ id: 0, rows: [], affectedRows: 0 } satisfies ThreadReply);
    return pglite;
  } catch (err) {
    // The main side rejects its start with this and ends the thread.
    port.postMessage({ id: 0, error: errorFields(err) } satisfies ThreadReply);
    return undefined;
  }
}

function serve(pglite: PGlite, arrays: ArrayParsers): void {
  // Statements run in the order they arrive; PGlite itself runs one at a time.
  port.on("message", async (req: ThreadRequest) => {
    if (req.op === "close") {
      try {
        await pglite.close();
        port.postMessage({ id: req.id, rows: [], affectedRows: 0 } satisfies ThreadReply);
      } catch (err) {
        port.postMessage({ id: req.id, error: errorFields(err) } satisfies ThreadReply);
      }
      return;
    }
    try {
      const r = await pglite.query<Record<string, unknown>>(req.sql, req.params);
      port.postMessage({
        id: req.id,
        rows: parseArrayColumns(r, arrays),
        affectedRows: r.affectedRows ?? 0,
      } satisfies ThreadReply);
    } catch (err) {
      port.postMessage({ id: req.id, error: errorFields(err) } satisfies ThreadReply);
    }
  });
}

const pglite = await open();
if (pglite) serve(pglite, moveArrayParsers(pglite));
