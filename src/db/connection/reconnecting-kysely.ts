/**
 * A Kysely over a pg pool that survives lost connections. Kysely runs every unit of work (one
 * statement, or a whole `db.transaction().execute(fn)`) as one consumer of one connection; the
 * connection provider here re-runs a consumer that failed because its connection died, on a fresh
 * connection, through the {@link Reconnector}. A transaction therefore re-runs whole (the server
 * rolled it back), never half.
 *
 * The one doubtful moment is COMMIT itself: the server may have committed when the answer was lost.
 * The driver notes each transaction's id after BEGIN and, when COMMIT loses its connection, asks
 * the server (`txid_status`) on a fresh connection: committed means done, anything else means
 * rolled back, so the transaction is run again. Nothing is ever applied twice.
 */
import {
  CompiledQuery,
  type ConnectionProvider,
  type DatabaseConnection,
  DefaultQueryExecutor,
  type Driver,
  Kysely,
  PostgresDialect,
  type QueryCompiler,
  type TransactionSettings,
} from "kysely";
import type pg from "pg";
import Cursor from "pg-cursor";
import type { Database } from "../schema.ts";
import { isConnectionLoss } from "./pg-errors.ts";
import type { Reconnector } from "./reconnect.ts";

/**
 * The tool's Kysely on `pool`, every unit of work retried through `reconnect`.
 *
 * @example
 *   const db = createReconnectingKysely(createPgPool(url), new Reconnector({ retryS: 60, logger, target }));
 */
export function createReconnectingKysely(pool: pg.Pool, reconnect: Reconnector): Kysely<Database> {
  const dialect = new PostgresDialect({ pool, cursor: Cursor });
  const driver = new CommitResolvingDriver(dialect.createDriver(), pool, reconnect);
  const executor = new DefaultQueryExecutor(
    dialect.createQueryCompiler(),
    dialect.createAdapter(),
    new ReconnectingConnectionProvider(driver, reconnect),
    [],
  );
  return new Kysely<Database>({ config: { dialect }, dialect, driver, executor });
}

class ReconnectingConnectionProvider implements ConnectionProvider {
  readonly #driver: Driver;
  readonly #reconnect: Reconnector;

  constructor(driver: Driver, reconnect: Reconnector) {
    this.#driver = driver;
    this.#reconnect = reconnect;
  }

  provideConnection<T>(consumer: (connection: DatabaseConnection) => Promise<T>): Promise<T> {
    return this.#reconnect.run(async () => {
      const connection = await this.#driver.acquireConnection();
      try {
        return await consumer(connection);
      } finally {
        // A dead client is not queryable, so the pool drops it instead of handing it out again.
        await this.#driver.releaseConnection(connection);
      }
    });
  }
}

/** Between two questions to a server still finishing a transaction whose client vanished. */
const IN_PROGRESS_WAIT_MS = 100;

class CommitResolvingDriver implements Driver {
  readonly #inner: Driver;
  readonly #pool: pg.Pool;
  readonly #reconnect: Reconnector;
  readonly #xids = new WeakMap<DatabaseConnection, string>();
  #init: Promise<void> | undefined;

  constructor(inner: Driver, pool: pg.Pool, reconnect: Reconnector) {
    this.#inner = inner;
    this.#pool = pool;
    this.#reconnect = reconnect;
  }

  init(): Promise<void> {
    this.#init ??= this.#inner.init();
    return this.#init;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.init();
    return this.#inner.acquireConnection();
  }

  async beginTransaction(
    connection: DatabaseConnection,
    settings: TransactionSettings,
  ): Promise<void> {
    await this.#inner.beginTransaction(connection, settings);
    const r = await connection.executeQuery<{ xid: string }>(
      CompiledQuery.raw("select txid_current()::text as xid"),
    );
    const xid = r.rows[0]?.xid;
    if (xid) this.#xids.set(connection, xid);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await this.#inner.commitTransaction(connection);
    } catch (err) {
      const xid = this.#xids.get(connection);
      if (!isConnectionLoss(err) || xid === undefined) throw err;
      if (await this.#committed(xid)) return;
      throw err;
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await this.#inner.rollbackTransaction(connection);
    } catch (err) {
      // The server rolls back a transaction whose connection died; keep the error that killed it.
      if (!isConnectionLoss(err)) throw err;
    }
  }

  savepoint(c: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]) {
    return this.#inner.savepoint!(c, name, compile);
  }

  rollbackToSavepoint(c: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]) {
    return this.#inner.rollbackToSavepoint!(c, name, compile);
  }

  releaseSavepoint(c: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]) {
    return this.#inner.releaseSavepoint!(c, name, compile);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.#inner.releaseConnection(connection);
  }

  async destroy(): Promise<void> {
    if (this.#init) await this.#inner.destroy();
  }

  /** Whether the transaction committed, asked on a fresh connection once the server answers. */
  async #committed(xid: string): Promise<boolean> {
    const deadline = Date.now() + this.#reconnect.options.retryS * 1000;
    for (;;) {
      const status = await this.#reconnect.run(
        async () => {
          const r = await this.#pool.query<{ status: string | null }>(
            "select txid_status($1::bigint) as status",
            [xid],
          );
          return r.rows[0]?.status ?? null;
        },
        { gated: false },
      );
      if (status === "committed") return true;
      if (status === "aborted") return false;
      // "in progress": the vanished client's backend has not finished yet; it may still commit.
      if (status === null || Date.now() > deadline) {
        throw new Error(
          `The database connection was lost during COMMIT and the outcome of transaction ${xid} cannot be told (${status ?? "unknown to the server"}). Check the run with \`controls-migrate runs\` before going on.`,
        );
      }
      await new Promise((r) => setTimeout(r, IN_PROGRESS_WAIT_MS));
    }
  }
}
