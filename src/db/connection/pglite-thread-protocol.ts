/**
 * The messages between the main thread (`pglite-thread.ts`) and the embedded database's thread
 * (`pglite-worker.ts`): their types and the list of error fields. Both sides import it, neither
 * pulls in the other.
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

/**
 * The fields of PGlite's `DatabaseError` carried back with a failed statement besides its message
 * (never the query's parameters). Written once: the worker copies them, `PgliteError` holds them.
 */
export const PG_ERROR_FIELDS = [
  "code",
  "severity",
  "detail",
  "hint",
  "position",
  "where",
  "schema",
  "table",
  "column",
  "dataType",
  "constraint",
  "routine",
] as const;

/** PostgreSQL's error fields, each a string when PostgreSQL gave it (`code` is the SQLSTATE). */
export type PgErrorFields = { readonly [F in (typeof PG_ERROR_FIELDS)[number]]?: string };

/** What a failed statement carries back: its message and PostgreSQL's error fields. */
export interface ThreadErrorFields extends PgErrorFields {
  readonly message: string;
}

/** Id 0 answers the start-up: ready, or the error that stopped PGlite from opening. */
export type ThreadReply =
  | {
      readonly id: number;
      readonly rows: Record<string, unknown>[];
      readonly affectedRows: number;
    }
  | { readonly id: number; readonly error: ThreadErrorFields };
