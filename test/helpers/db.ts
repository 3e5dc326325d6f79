/**
 * Test databases on every available backend. PGlite always; PostgreSQL too when env
 * TEST_DATABASE_URL is set (an admin URL, e.g. postgres://postgres@127.0.0.1:55432/postgres).
 * Each `open()` gives a brand-new empty database, dropped again by its `close()`.
 *
 * @example
 *   for (const b of backends) {
 *     describe(`journal on ${b.name}`, () => {
 *       let h: TestDatabase;
 *       before(async () => { h = await b.open({ migrate: true }); });
 *       after(() => h.close());
 *       it("...", async () => { await h.db.selectFrom("controls_migration.runs")... });
 *     });
 *   }
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { type GlobalConfig, loadGlobalConfig } from "../../src/config.ts";
import {
  createPgPool,
  type DatabaseHandle,
  openDatabase,
  openPgliteThread,
  wrapPgPool,
} from "../../src/db/connection/connect.ts";
import { migrateToLatest } from "../../src/db/connection/migrate.ts";
import { silentLogger } from "../../src/log.ts";
import { copyInitialisedPgliteFolder, type PreparedDatabase } from "./pglite-folder.ts";

export type { PreparedDatabase } from "./pglite-folder.ts";

export interface OpenOptions {
  /** Apply the tool's migrations before returning. */
  readonly migrate?: boolean;
}

/** An open test database. `close()` also deletes it. */
export interface TestDatabase extends DatabaseHandle {
  /** Which database this is (backend and name), for test output. */
  readonly name: string;
}

/**
 * A database the CLI can reach from another process: `args` are the flags to pass
 * (`--database-url URL` or `--data-dir DIR`), `global` the matching config for `openDatabase`.
 * PGlite allows one process at a time: close any handle from `open()` before running the CLI.
 */
export interface TestTarget {
  readonly args: readonly string[];
  readonly global: GlobalConfig;
  open(options?: OpenOptions): Promise<DatabaseHandle>;
  /** Deletes the database (and its folder). */
  drop(): Promise<void>;
}

export interface Backend {
  readonly name: "pglite" | "postgres";
  /** A fresh, empty database in this process (for PGlite, a folder removed by its `close()`). */
  open(options?: OpenOptions): Promise<TestDatabase>;
  /**
   * A fresh, empty database addressable by a CLI child process; with `migrated`, holding the
   * tool's schema already (as after a first run), which a test that seeds it before the CLI's
   * first run may ask for; with `prepared`, holding what its `build` writes (a source relation
   * seeded, say). On PGlite a prepared database is a copy of a folder built once for the checkout
   * (`pglite-folder.ts`), so the test does not open it to seed it: about 1 s of CPU each time.
   */
  target(options?: {
    readonly migrated?: boolean;
    readonly prepared?: PreparedDatabase;
  }): Promise<TestTarget>;
}

const adminUrl = process.env.TEST_DATABASE_URL || undefined;

/** The defaults of every global option (from the options table), quiet, with `over` on top. */
function globalFor(over: Partial<GlobalConfig>): GlobalConfig {
  return Object.freeze({
    ...loadGlobalConfig({}, {}),
    logLevel: "error",
    progress: false,
    dbRetryS: 60,
    ...over,
  });
}

async function prepared(handle: DatabaseHandle, options?: OpenOptions): Promise<DatabaseHandle> {
  if (options?.migrate) {
    try {
      await migrateToLatest(handle.db, silentLogger);
    } catch (err) {
      await handle.close();
      throw err;
    }
  }
  return handle;
}

/** Folders of `open()` databases not closed yet: removed at the latest when the process exits. */
const openFolders = new Set<string>();
process.once("exit", () => {
  for (const dir of openFolders) rmSync(dir, { recursive: true, force: true });
});

/**
 * A fresh PGlite database in a folder of its own: a copy of the folder initialised once for the
 * whole suite (`pglite-folder.ts`), removed by `close()`. Copying and opening it took 0.8–1.1 s of
 * CPU, against 1.2–1.3 s for restoring a dump into PGlite's memory and 4.7 s for an initdb.
 */
async function freshPglite(migrated: boolean): Promise<DatabaseHandle> {
  const dir = mkdtempSync(join(tmpdir(), "cm-test-pglite-"));
  openFolders.add(dir);
  const removed = () => {
    rmSync(dir, { recursive: true, force: true });
    openFolders.delete(dir);
  };
  try {
    await copyInitialisedPgliteFolder(join(dir, "data"), { migrated });
    const handle = await openPgliteThread({ dataDir: join(dir, "data") });
    let closing: Promise<void> | undefined;
    return {
      ...handle,
      close: () => {
        closing ??= handle.close().finally(removed);
        return closing;
      },
    };
  } catch (err) {
    removed();
    throw err;
  }
}

const pgliteBackend: Backend = {
  name: "pglite",
  async open(options) {
    // Migrated: a copy of the suite's migrated folder, on which migrating finds nothing to do.
    const handle = await prepared(await freshPglite(options?.migrate === true), options);
    return { ...handle, name: "pglite (a fresh folder)" };
  },
  async target(options) {
    const dir = mkdtempSync(join(tmpdir(), "cm-test-pglite-"));
    const dataDir = join(dir, "data");
    // A copy of a folder initialised once for the suite: initdb in every target cost ~5 s a test.
    await copyInitialisedPgliteFolder(dataDir, {
      migrated: options?.migrated === true,
      ...(options?.prepared ? { prepared: options.prepared } : {}),
    });
    const global = globalFor({ dataDir });
    return {
      args: ["--data-dir", dataDir],
      global,
      open: async (options) => prepared(await openDatabase(global, silentLogger), options),
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
};

/** Creates `cm_test_<random>` through the admin URL and returns its URL and a dropper. */
async function createThrowawayDatabase(admin: string) {
  const name = `cm_test_${randomBytes(6).toString("hex")}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    name,
    url: url.toString(),
    async drop() {
      if (dropped) return;
      dropped = true;
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      try {
        await c.query(`drop database if exists ${name} with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

function postgresBackend(admin: string): Backend {
  return {
    name: "postgres",
    async open(options) {
      const tdb = await createThrowawayDatabase(admin);
      const inner = wrapPgPool(createPgPool(tdb.url));
      let closing: Promise<void> | undefined;
      const handle: DatabaseHandle = {
        db: inner.db,
        backend: "postgres",
        postgres: inner.postgres,
        close: () => {
          closing ??= inner.close().finally(() => tdb.drop());
          return closing;
        },
      };
      return { ...(await prepared(handle, options)), name: `postgres (${tdb.name})` };
    },
    async target(options) {
      const tdb = await createThrowawayDatabase(admin);
      const global = globalFor({ databaseUrl: tdb.url });
      if (options?.prepared) {
        const h = await prepared(await openDatabase(global, silentLogger), {
          migrate: options.migrated === true,
        });
        try {
          await options.prepared.build(h.db);
        } finally {
          await h.close();
        }
      }
      return {
        args: ["--database-url", tdb.url],
        global,
        open: async (options) => prepared(await openDatabase(global, silentLogger), options),
        drop: () => tdb.drop(),
      };
    },
  };
}

/** Every backend available in this environment: PGlite, plus PostgreSQL with TEST_DATABASE_URL. */
export const backends: readonly Backend[] = adminUrl
  ? [pgliteBackend, postgresBackend(adminUrl)]
  : [pgliteBackend];
