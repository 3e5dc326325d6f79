/**
 * The messages between the main thread (`pglite-thread.ts`) and the embedded database's thread
 * (`pglite-worker.ts`). Types only: both sides import it, neither pulls in the other.
 */

/** What the database thread is started with (its `workerData`). */
export interface PgliteThreadInit {
  /** A data folder on disk; absent: in memory. */
  readonly dataDir?: string;
  /** A data folder dumped by `dumpDataDir("none")`, restored instead of running initdb. */
  readonly loadDataDir?: Uint8Array;
  /** Initial WebAssembly memory in bytes (PGlite's `initialMemory`). */
  readonly initialMemory?: number;
  /** PostgreSQL settings passed as `-c name=value` at start-up, after PGlite's own. */
  readonly settings: readonly (readonly [string, string])[];
}

export type ThreadRequest =
  | { readonly op: "query"; readonly id: number; readonly sql: string; readonly params: unknown[] }
  | { readonly op: "close"; readonly id: number };

/** The PostgreSQL error fields carried back with a failed statement (PGlite's `DatabaseError`). */
export interface ThreadErrorFields {
  readonly message: string;
  readonly code?: string;
  readonly severity?: string;
  readonly detail?: string;
  readonly hint?: string;
  readonly position?: string;
  readonly where?: string;
  readonly schema?: string;
  readonly table?: string;
  readonly column?: string;
  readonly dataType?: string;
  readonly constraint?: string;
  readonly routine?: string;
}

/** Id 0 answers the start-up: ready, or the error that stopped PGlite from opening. */
export type ThreadReply =
  | {
      readonly id: number;
      readonly rows: Record<string, unknown>[];
      readonly affectedRows: number;
    }
  | { readonly id: number; readonly error: ThreadErrorFields };
