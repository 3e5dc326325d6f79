/**
 * The database going away is a fault to survive: killed backends and lost COMMIT answers on the
 * shared server (only this file's own database and sessions), a stopped server on a cluster of the
 * test's own. PostgreSQL only: PGlite is embedded and has no connection to lose.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { sql } from "kysely";
import pg from "pg";
import { loadSourceConfig } from "../../src/config.ts";
import {
  createPgPool,
  type DatabaseHandle,
  openDatabase,
  wrapPgPool,
} from "../../src/db/connection/connect.ts";
import { migrateToLatest } from "../../src/db/connection/migrate.ts";
import { DatabaseLostError } from "../../src/db/connection/reconnect.ts";
import {
  acquireRunLock,
  WRITER_LOCK_KEY,
  WriterLockTakenError,
} from "../../src/db/connection/run-lock.ts";
import { seedSource } from "../../src/db/source/seed.ts";
import { readSource } from "../../src/db/source/source-reader.ts";
import { createLogger, silentLogger } from "../../src/log.ts";
import { storeFindings } from "../../src/migration/classify/findings.ts";
import { collect, REPO_ROOT } from "../helpers/cli.ts";
import {
  type Cluster,
  clusterUnavailable,
  databaseOf,
  startCluster,
  terminateBackends,
  waitForRunningStatement,
} from "../helpers/pg-cluster.ts";
import { startFaultProxy } from "../helpers/pg-fault-proxy.ts";

const CONNECT_MODULE = pathToFileURL(join(REPO_ROOT, "src/db/connection/connect.ts")).href;

const adminUrl = process.env.TEST_DATABASE_URL || undefined;

async function createDatabase(admin: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `cm_loss_${Math.random().toString(16).slice(2, 10)}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`create database ${name}`);
  await c.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const d = new pg.Client({ connectionString: admin });
      await d.connect();
      await d.query(`drop database if exists ${name} with (force)`);
      await d.end();
    },
  };
}

/** Terminates every session of the database, again and again, until stopped. */
function keepTerminating(admin: string, database: string, everyMs: number) {
  let stop = false;
  let rounds = 0;
  const loop = (async () => {
    while (!stop) {
      await new Promise((r) => setTimeout(r, everyMs));
      if (stop) break;
      if ((await terminateBackends(admin, database)) > 0) rounds += 1;
    }
  })();
  return {
    /** Resolves once one more round has terminated a backend (or after `maxMs`). */
    async nextRound(maxMs = 10_000) {
      const seen = rounds;
      const until = Date.now() + maxMs;
      while (rounds === seen && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    },
    async stop() {
      stop = true;
      await loop;
      return rounds;
    },
  };
}

describe("lost PostgreSQL connections", {
  skip: adminUrl ? false : "needs TEST_DATABASE_URL",
  timeout: 120_000,
}, () => {
  let url: string;
  let drop: () => Promise<void>;
  let handle: DatabaseHandle;
  const logged: string[] = [];
  const logger = createLogger({ level: "info", write: (l) => logged.push(l) });

  before(async () => {
    ({ url, drop } = await createDatabase(adminUrl!));
    handle = wrapPgPool(createPgPool(url), { retryS: 30, logger, target: "PostgreSQL test" });
    await migrateToLatest(handle.db, silentLogger);
    await sql`create table t (n int primary key)`.execute(handle.db);
  });
  after(async () => {
    await handle?.close();
    await drop?.();
  });

  it("a checked-out client whose backend is terminated does not crash the process", async () => {
    // In a child process: unheard, the client's 'error' event ends the process that holds it.
    const child = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { sql } from "kysely";
         import { createPgPool, wrapPgPool } from ${JSON.stringify(CONNECT_MODULE)};
         const handle = wrapPgPool(createPgPool(process.env.URL));
         const held = await handle.postgres.pool.connect(); // checked out, like the writer lock's session
         let ended = false;
         held.once("end", () => { ended = true; });
         process.stdout.write("ready\\n");
         await new Promise((r) => process.stdin.once("data", r));
         while (!ended) await new Promise((r) => setTimeout(r, 5)); // the termination reached it
         held.release(true);
         const r = await sql\`select 1 as one\`.execute(handle.db);
         process.stdout.write("alive " + r.rows[0].one + "\\n");
         await handle.close();`,
      ],
      { cwd: REPO_ROOT, env: { ...process.env, URL: url }, stdio: ["pipe", "pipe", "pipe"] },
    );
    const result = collect(child);
    await new Promise<void>((r) =>
      child.stdout!.on("data", (d) => String(d).includes("ready") && r()),
    );
    assert.ok((await terminateBackends(adminUrl!, databaseOf(url))) >= 1);
    child.stdin!.end("go\n");
    const { code, stdout, stderr } = await result;
    assert.doesNotMatch(stderr, /Unhandled 'error' event|terminating connection/);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /alive 1/);
  });

  it("a statement whose connection is terminated mid-flight runs again on a fresh connection", async () => {
    logged.length = 0;
    const running = sql<{ x: number }>`select pg_sleep(2), 42 as x`.execute(handle.db);
    await waitForRunningStatement(adminUrl!, databaseOf(url), "pg_sleep(2), 42");
    assert.ok((await terminateBackends(adminUrl!, databaseOf(url))) >= 1);
    assert.equal((await running).rows[0]?.x, 42);
    assert.ok(
      logged.some((l) =>
        /WARN\s+Lost the database connection \(terminating connection due to administrator command \(57P01\)\); retrying for up to 30 s/.test(
          l,
        ),
      ),
      logged.join("\n"),
    );
    assert.ok(
      logged.some((l) => /INFO\s+Database connection back after/.test(l)),
      logged.join("\n"),
    );
  });

  it("a transaction whose connection is terminated before COMMIT runs again whole", async () => {
    await sql`truncate t`.execute(handle.db);
    let runs = 0;
    const tx = handle.db.transaction().execute(async (trx) => {
      runs += 1;
      await sql`insert into t values (1)`.execute(trx);
      await sql`select pg_sleep(2)`.execute(trx);
      await sql`insert into t values (2)`.execute(trx);
    });
    await waitForRunningStatement(adminUrl!, databaseOf(url), "pg_sleep(2)");
    await terminateBackends(adminUrl!, databaseOf(url));
    await tx;
    assert.equal(runs, 2, "the transaction ran a second time");
    const rows = await sql<{ n: number }>`select n from t order by n`.execute(handle.db);
    assert.deepEqual(
      rows.rows.map((r) => r.n),
      [1, 2],
    );
  });

  it("a COMMIT whose answer is lost is resolved by asking the server, never run twice", async () => {
    const proxy = await startFaultProxy(url);
    const viaProxy = wrapPgPool(createPgPool(proxy.url), { retryS: 30, logger: silentLogger });
    try {
      await sql`truncate t`.execute(viaProxy.db);
      let runs = 0;
      proxy.loseNextCommitAnswer();
      await viaProxy.db.transaction().execute(async (trx) => {
        runs += 1;
        // Not idempotent on purpose: a second run would fail on the primary key.
        await sql`insert into t values (7)`.execute(trx);
      });
      assert.equal(proxy.lostCommits, 1);
      assert.equal(runs, 1);
      const rows = await sql<{ n: number }>`select n from t`.execute(viaProxy.db);
      assert.deepEqual(
        rows.rows.map((r) => r.n),
        [7],
      );
    } finally {
      await viaProxy.close();
      await proxy.close();
    }
  });

  it("a batch of findings whose answer is lost is sent again and stores each finding and action once", async () => {
    const proxy = await startFaultProxy(url);
    const viaProxy = wrapPgPool(createPgPool(proxy.url), { retryS: 30, logger: silentLogger });
    const runId = "20260101-000000-lost";
    try {
      await sql`insert into controls_migration.runs (id, mode, status, tool_version, host, pid)
        values (${runId}, 'apply', 'running', 'test', 'here', 1)`.execute(viaProxy.db);
      const id = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;
      const row = (n: number, userDisabled: boolean) => ({
        identity_id: id(n),
        user_disabled: userDisabled,
        admin_disabled: false,
        has_source: true,
        status: "found" as const,
        error: null,
        platform_user_disabled: null,
        platform_admin_disabled: null,
        controls: [],
      });
      proxy.loseNextAnswerTo(/"controls_migration"\."findings"/);
      await storeFindings(
        viaProxy.db,
        runId,
        [row(1, true), row(2, true), row(3, false)],
        { journalCreates: true, journalDeletes: false },
        {
          identities: [1, 2, 3].map((n) => ({
            run_id: runId,
            identity_id: id(n),
            status: "found" as const,
            error: null,
          })),
          controls: [],
        },
      );
      assert.equal(proxy.lostCommits, 1, "the statement's answer was lost once");
      const count = async (table: string) =>
        Number(
          (
            await sql<{
              n: number;
            }>`select count(*)::int as n from ${sql.table(`controls_migration.${table}`)}
              where run_id = ${runId}`.execute(viaProxy.db)
          ).rows[0]?.n,
        );
      assert.equal(await count("findings"), 2, "two missing client controls, once each");
      assert.equal(await count("actions"), 2, "two creates, once each");
      assert.equal(await count("snapshot_identities"), 3);
    } finally {
      await viaProxy.close();
      await proxy.close();
    }
  });

  it("the source pass resumes from its last key while its connections keep being terminated", async () => {
    await sql`create table src (id text, user_disabled boolean, admin_disabled boolean)`.execute(
      handle.db,
    );
    await sql`create index on src (id)`.execute(handle.db);
    const source = loadSourceConfig({ "source-relation": "src", "batch-size": 50 }, {});
    await seedSource(handle.db, source, { identities: 3000, seed: 9 });
    const killer = keepTerminating(adminUrl!, databaseOf(url), 40);
    const ids: string[] = [];
    const seqs: number[] = [];
    let pages = 0;
    try {
      for await (const batch of readSource(handle.db, source)) {
        for (const row of batch.rows) {
          ids.push(row.identityId!);
          seqs.push(row.seq);
        }
        // Slow the reader a little so terminations land between and during pages, and every 15
        // pages wait for the next termination: on a loaded machine the pass must not outrun them.
        pages += 1;
        if (pages % 15 === 0) await killer.nextRound();
        else await new Promise((r) => setTimeout(r, 2));
      }
    } finally {
      const rounds = await killer.stop();
      assert.ok(rounds >= 3, `terminations during the pass: ${rounds}`);
    }
    assert.equal(ids.length, 3000);
    assert.equal(new Set(ids).size, 3000, "no row read twice");
    assert.deepEqual(
      seqs,
      Array.from({ length: 3000 }, (_, i) => i + 1),
    );
  });

  it("the writer lock is taken again after its session is terminated", async () => {
    const lock = await acquireRunLock(handle);
    assert.ok(lock);
    try {
      const holder = async () =>
        (
          await sql<{
            pid: number | null;
          }>`select (select pid from pg_locks where locktype = 'advisory'
             and objid = ${WRITER_LOCK_KEY} and granted and database =
             (select oid from pg_database where datname = current_database()) limit 1) as pid`.execute(
            handle.db,
          )
        ).rows[0]?.pid;
      const before = await holder();
      assert.ok(before);
      await terminateBackends(adminUrl!, databaseOf(url));
      // The next statement waits until the lock is held again.
      const after = await holder();
      assert.ok(after && after !== before, `lock holder before ${before}, after ${after}`);
    } finally {
      await lock.release();
    }
  });

  it("taking and releasing the writer lock 20 times leaves no listener on the pooled clients it goes back to", async () => {
    const pool = handle.postgres!.pool;
    /** The most lost-session listeners any idle client carries. */
    const listeners = async () => {
      const idle = await Promise.all(Array.from({ length: pool.idleCount }, () => pool.connect()));
      const most = Math.max(
        0,
        ...idle.map((c) => c.listenerCount("error") + c.listenerCount("end")),
      );
      for (const c of idle) c.release();
      return most;
    };
    const takeAndRelease = async () => {
      const lock = await acquireRunLock(handle);
      assert.ok(lock);
      await lock.release();
    };
    await takeAndRelease();
    const once = await listeners();
    for (let i = 0; i < 20; i++) await takeAndRelease();
    assert.equal(await listeners(), once);
  });

  it("a run whose lock another writer took meanwhile stops: every later statement fails with a clear message", async () => {
    // The run reaches the server through a proxy, so the test can keep it from reconnecting while
    // another writer takes the lock.
    const proxy = await startFaultProxy(url);
    const lines: string[] = [];
    const run = wrapPgPool(createPgPool(proxy.url), {
      retryS: 30,
      logger: createLogger({ level: "info", write: (l) => lines.push(l) }),
    });
    const lock = await acquireRunLock(run);
    assert.ok(lock);
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      proxy.setAccepting(false);
      await other.query(
        `select pg_terminate_backend(pid) from pg_locks where locktype = 'advisory' and granted
           and objid = ${WRITER_LOCK_KEY}
           and database = (select oid from pg_database where datname = current_database())`,
      );
      // The run notices its lock session is gone and starts taking the lock again, in vain for now.
      for (let i = 0; i < 500 && !lines.some((l) => l.includes("holding the writer lock")); i++)
        await new Promise((r) => setTimeout(r, 10));
      let took = false;
      for (let i = 0; i < 200 && !took; i++) {
        took = (
          await other.query<{ ok: boolean }>(
            `select pg_try_advisory_lock(${WRITER_LOCK_KEY}) as ok`,
          )
        ).rows[0]!.ok;
        if (!took) await new Promise((r) => setTimeout(r, 10));
      }
      assert.ok(took, "the other writer took the lock");
      proxy.setAccepting(true);
      await assert.rejects(sql`select 1`.execute(run.db), (err: unknown) => {
        assert.ok(err instanceof WriterLockTakenError);
        assert.match(
          err.message,
          /Another apply\/reconcile took the writer lock while this run's database connection was lost \(PostgreSQL backend pid \d+\)\. This run stopped without sending anything more/,
        );
        return true;
      });
      await lock.release();
      // Released: the handle works again for whatever comes next (closing the run, reports).
      assert.equal((await sql<{ one: number }>`select 1 as one`.execute(run.db)).rows[0]?.one, 1);
    } finally {
      await lock.release();
      await other.end();
      await run.close();
      await proxy.close();
    }
  });
});

describe("a database that stays away", {
  skip: (adminUrl ? false : "needs TEST_DATABASE_URL") || clusterUnavailable() || false,
  timeout: 120_000,
}, () => {
  let cluster: Cluster;
  before(async () => {
    cluster = await startCluster();
  });
  after(() => cluster?.destroy());

  it("gives up after --db-retry-s with a message naming the time and place, and the next open marks the run interrupted", async () => {
    const url = await cluster.createDatabase();
    const global = {
      databaseUrl: url,
      dataDir: "",
      logLevel: "error" as const,
      logFormat: "text" as const,
      json: false,
      progress: false,
      dbRetryS: 2,
    };
    const h = await openDatabase(global, silentLogger);
    await migrateToLatest(h.db, silentLogger);
    await sql`insert into controls_migration.runs (id, mode, status, tool_version, host, pid, heartbeat_at)
              values ('20260101-000000-aaaa', 'apply', 'running', 'test', 'here', 1, now())`.execute(
      h.db,
    );
    cluster.stop();
    const started = Date.now();
    try {
      await assert.rejects(sql`select 1`.execute(h.db), (err: unknown) => {
        assert.ok(err instanceof DatabaseLostError);
        assert.match(
          err.message,
          new RegExp(
            `^Lost the database connection at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z \\(PostgreSQL 127\\.0\\.0\\.1:${cluster.port}/${databaseOf(url)}\\) and could not get it back within 2 s \\(--db-retry-s\\): .+\\. Once the database is back`,
          ),
        );
        return true;
      });
      const took = Date.now() - started;
      // Not before --db-retry-s; how long after depends on the machine's load, not on the rule.
      assert.ok(took >= 1_900, `gave up after ${took} ms`);
    } finally {
      await h.close();
      cluster.start();
    }
    const again = await openDatabase(global, silentLogger);
    try {
      const r = await sql<{
        status: string;
      }>`select status from controls_migration.runs where id = '20260101-000000-aaaa'`.execute(
        again.db,
      );
      assert.equal(r.rows[0]?.status, "interrupted");
    } finally {
      await again.close();
    }
  });
});
