/**
 * Kysely over a {@link PgliteThread}: PostgreSQL's compiler, adapter and introspector, and a
 * driver with the one connection PGlite has. The connection goes to one holder at a time, so a
 * transaction (which Kysely runs on one held connection) is pinned to it from BEGIN to COMMIT.
 * `stream()` reads through a server-side cursor, a chunk per round trip, so a large result is
 * never held whole on either thread.
 */
import {
  CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from "kysely";
import type { PgliteThread } from "./pglite-thread.ts";

/**
 * The dialect; the thread is closed by the driver's `destroy()` (`db.destroy()`).
 *
 * @example
 *   const db = new Kysely<Database>({ dialect: new PgliteThreadDialect(await PgliteThread.start()) });
 */
export class PgliteThreadDialect implements Dialect {
  readonly #thread: PgliteThread;

  constructor(thread: PgliteThread) {
    this.#thread = thread;
  }

  createAdapter(): DialectAdapter {
    return new PostgresAdapter();
  }

  createDriver(): Driver {
    return new PgliteThreadDriver(this.#thread);
  }

  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler();
  }

  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new PostgresIntrospector(db);
  }
}

class PgliteThreadDriver implements Driver {
  readonly #thread: PgliteThread;
  readonly #connection: PgliteThreadConnection;
  #held = false;
  readonly #waiting: ((c: PgliteThreadConnection) => void)[] = [];

  constructor(thread: PgliteThread) {
    this.#thread = thread;
    this.#connection = new PgliteThreadConnection(thread);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    if (!this.#held) {
      this.#held = true;
      return this.#connection;
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  async releaseConnection(): Promise<void> {
    const next = this.#waiting.shift();
    if (next) next(this.#connection);
    else this.#held = false;
  }

  async beginTransaction(c: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    let sql = "begin";
    if (settings.isolationLevel || settings.accessMode) {
      sql = "start transaction";
      if (settings.isolationLevel) sql += ` isolation level ${settings.isolationLevel}`;
      if (settings.accessMode) sql += ` ${settings.accessMode}`;
    }
    await c.executeQuery(CompiledQuery.raw(sql));
    (c as PgliteThreadConnection).inTransaction = true;
  }

  async commitTransaction(c: DatabaseConnection): Promise<void> {
    await this.#end(c, "commit");
  }

  async rollbackTransaction(c: DatabaseConnection): Promise<void> {
    await this.#end(c, "rollback");
  }

  async savepoint(c: DatabaseConnection, name: string): Promise<void> {
    await c.executeQuery(CompiledQuery.raw(`savepoint ${quoteIdent(name)}`));
  }

  async rollbackToSavepoint(c: DatabaseConnection, name: string): Promise<void> {
    await c.executeQuery(CompiledQuery.raw(`rollback to savepoint ${quoteIdent(name)}`));
  }

  async releaseSavepoint(c: DatabaseConnection, name: string): Promise<void> {
    await c.executeQuery(CompiledQuery.raw(`release savepoint ${quoteIdent(name)}`));
  }

  async destroy(): Promise<void> {
    await this.#thread.close();
  }

  async #end(c: DatabaseConnection, sql: "commit" | "rollback"): Promise<void> {
    try {
      await c.executeQuery(CompiledQuery.raw(sql));
    } finally {
      (c as PgliteThreadConnection).inTransaction = false;
    }
  }
}

let cursors = 0;

class PgliteThreadConnection implements DatabaseConnection {
  readonly #thread: PgliteThread;
  /** Set by the driver between BEGIN and COMMIT/ROLLBACK: a stream then uses that transaction. */
  inTransaction = false;

  constructor(thread: PgliteThread) {
    this.#thread = thread;
  }

  async executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
    try {
      const r = await this.#thread.query(q.sql, q.parameters);
      return { rows: r.rows as R[], numAffectedRows: BigInt(r.affectedRows) };
    } catch (err) {
      throw withCallerStack(err);
    }
  }

  async *streamQuery<R>(q: CompiledQuery, chunkSize = 1000): AsyncIterableIterator<QueryResult<R>> {
    if (!Number.isInteger(chunkSize) || chunkSize <= 0) {
      throw new Error("chunkSize must be a positive integer");
    }
    // A cursor lives in a transaction: the caller's, or one of its own around the stream.
    const own = !this.inTransaction;
    const name = `cm_stream_${++cursors}`;
    if (own) await this.#run("begin");
    let ok = false;
    try {
      await this.executeQuery(
        CompiledQuery.raw(`declare ${name} no scroll cursor for ${q.sql}`, [...q.parameters]),
      );
      for (;;) {
        const r = await this.#run(`fetch forward ${chunkSize} from ${name}`);
        if (r.rows.length === 0) break;
        yield { rows: r.rows as R[] };
        if (r.rows.length < chunkSize) break;
      }
      await this.#run(`close ${name}`);
      ok = true;
    } finally {
      // A failure, or a consumer that stopped early: the cursor goes, and the error (if any)
      // stays the one that reaches the caller.
      if (!ok) await this.#run(own ? "rollback" : `close ${name}`).catch(() => {});
      else if (own) await this.#run("commit");
    }
  }

  #run(sql: string): Promise<QueryResult<Record<string, unknown>>> {
    return this.executeQuery(CompiledQuery.raw(sql));
  }
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The error as the thread sent it, with the stack of the code that ran the statement. */
function withCallerStack(err: unknown): unknown {
  if (err instanceof Error) {
    const here = new Error().stack?.split("\n").slice(2).join("\n");
    if (here) err.stack = `${err.name}: ${err.message}\n${here}`;
  }
  return err;
}
