/**
 * What an open database is, apart from how it is opened (`connect.ts`): the lock and abandoned-run
 * modules that opening uses depend on these types only, so no circle of files runs through them.
 */
import type { Kysely } from "kysely";
import type pg from "pg";
import type { Database } from "../schema.ts";
import type { PgliteThread } from "./pglite-thread.ts";
import type { Reconnector } from "./reconnect.ts";

export type Backend = "postgres" | "pglite";

/** An open database. `close()` releases everything and is safe to call more than once. */
export interface DatabaseHandle {
  readonly db: Kysely<Database>;
  readonly backend: Backend;
  /** PostgreSQL only: the pool (for dedicated sessions, e.g. the writer lock) and its reconnector. */
  readonly postgres?: PostgresSession;
  /** PGlite only: the worker thread the embedded database runs in. */
  readonly pglite?: PgliteThread;
  close(): Promise<void>;
}

/** What a PostgreSQL handle offers besides `db`. */
export interface PostgresSession {
  readonly pool: pg.Pool;
  /** Every unit of work on `db` goes through it; dedicated sessions use it to reconnect. */
  readonly reconnect: Reconnector;
}
