import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { type GlobalConfig, loadGlobalConfig } from "../../src/config.ts";
import {
  createPgPool,
  openDatabase,
  openPgliteThread,
  wrapPgPool,
} from "../../src/db/connection/connect.ts";
import { UserError } from "../../src/errors.ts";
import { silentLogger } from "../../src/log.ts";
import { backends } from "../helpers/db.ts";
import { copyInitialisedPgliteFolder } from "../helpers/pglite-folder.ts";

const globalFor = (over: Partial<GlobalConfig>): GlobalConfig => ({
  ...loadGlobalConfig({}, {}),
  logLevel: "error",
  progress: false,
  dbRetryS: 60,
  ...over,
});

/** A loopback port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe("openDatabase with embedded PGlite", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "cm-open-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("creates missing parent folders and keeps data across reopenings", async () => {
    const dataDir = join(dir, "a", "b", "pglite");
    const first = await openDatabase(globalFor({ dataDir }), silentLogger);
    assert.equal(first.backend, "pglite");
    await sql`create table kept (x int)`.execute(first.db);
    await sql`insert into kept values (42)`.execute(first.db);
    await first.close();
    await first.close(); // a second close is harmless
    const second = await openDatabase(globalFor({ dataDir }), silentLogger);
    const rows = await sql<{ x: number }>`select x from kept`.execute(second.db);
    assert.deepEqual(rows.rows, [{ x: 42 }]);
    await second.close();
  });

  it("ends the database thread even when the handle never ran a query", async () => {
    // Kysely's destroy() skips the driver when it was never used; a database thread left running
    // would hold its memory (a whole PostgreSQL) until the process ends.
    const dataDir = join(dir, "never-queried");
    await copyInitialisedPgliteFolder(dataDir);
    const h = await openPgliteThread({ dataDir });
    assert.equal(h.pglite?.running, true);
    await h.close();
    assert.equal(h.pglite?.running, false);
  });

  it("refuses a second opening of a data folder that is in use, naming --data-dir", async () => {
    const dataDir = join(dir, "busy");
    const first = await openDatabase(globalFor({ dataDir }), silentLogger);
    try {
      await assert.rejects(
        openDatabase(globalFor({ dataDir }), silentLogger),
        (err: Error) => err instanceof UserError && /already open|in use/.test(err.message),
      );
    } finally {
      await first.close();
    }
    assert.equal(existsSync(`${dataDir}.lock`), false, "close() releases the lock");
  });

  it("takes over the lock left by a process that died: the lock then holds this process's pid until close", async () => {
    const dataDir = join(dir, "stale");
    // No process has pid 2^22+1 on Linux (pid_max is at most 2^22).
    writeFileSync(`${dataDir}.lock`, `${2 ** 22 + 1}\n`);
    const h = await openDatabase(globalFor({ dataDir }), silentLogger);
    try {
      const holder = JSON.parse(readFileSync(`${dataDir}.lock`, "utf8")) as { pid: number };
      assert.equal(holder.pid, process.pid);
    } finally {
      await h.close();
    }
    assert.equal(existsSync(`${dataDir}.lock`), false, "close() releases the lock");
  });

  it("refuses a lock held by another live process and names it", async () => {
    const dataDir = join(dir, "other");
    writeFileSync(`${dataDir}.lock`, `${process.ppid}\n`);
    await assert.rejects(
      openDatabase(globalFor({ dataDir }), silentLogger),
      (err: Error) =>
        err instanceof UserError &&
        err.message.includes(`pid ${process.ppid}`) &&
        /--data-dir/.test(err.message),
    );
    rmSync(`${dataDir}.lock`);
  });
});

describe("openDatabase with PostgreSQL", () => {
  it("turns a refused connection into a UserError naming --database-url, password redacted", async () => {
    const port = await closedPort();
    const url = `postgres://alice:pa55-w0rd-secret@127.0.0.1:${port}/app`;
    await assert.rejects(
      openDatabase(globalFor({ databaseUrl: url }), silentLogger),
      (err: Error) => {
        assert.ok(err instanceof UserError);
        assert.match(err.message, /--database-url/);
        assert.match(err.message, /DATABASE_URL/);
        assert.match(err.message, /refused/);
        assert.ok(!err.message.includes("pa55-w0rd-secret"), err.message);
        assert.equal(err.cause, undefined);
        return true;
      },
    );
  });
});

const postgres = backends.find((b) => b.name === "postgres");
describe("openDatabase against the test PostgreSQL server", {
  skip: postgres ? false : "needs TEST_DATABASE_URL (a PostgreSQL server)",
}, () => {
  it("names a missing database in the error", async () => {
    const target = await postgres!.target();
    const url = new URL(target.global.databaseUrl!);
    url.pathname = "/cm_no_such_database";
    await target.drop();
    await assert.rejects(
      openDatabase(globalFor({ databaseUrl: url.toString() }), silentLogger),
      (err: Error) =>
        err instanceof UserError &&
        /cm_no_such_database/.test(err.message) &&
        /--database-url/.test(err.message),
    );
  });

  it("ends the pool even when the handle never ran a query through Kysely", async () => {
    const target = await postgres!.target();
    const pool = createPgPool(target.global.databaseUrl!);
    await pool.query("select 1"); // leaves an idle client that would hold the process open
    await wrapPgPool(pool).close();
    assert.equal(pool.ended, true);
    await target.drop();
  });

  it("returns int8 values as numbers, like PGlite", async () => {
    const target = await postgres!.target();
    const h = await target.open();
    try {
      const r = await sql<{
        n: unknown;
        b: unknown;
      }>`select count(*) as n, 9007199254740991::int8 as b`.execute(h.db);
      assert.deepEqual(r.rows, [{ n: 1, b: Number.MAX_SAFE_INTEGER }]);
    } finally {
      await h.close();
      await target.drop();
    }
  });
});
