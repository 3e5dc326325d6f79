/**
 * Databases for the benchmarks: a PostgreSQL server (the admin URL in BENCH_DATABASE_URL or
 * TEST_DATABASE_URL, else a throwaway server started here the way `.ci/run` does), a throwaway
 * database per scenario run on it, or a throwaway PGlite folder; and seeding through the CLI.
 *
 * @example
 *   const found = await findPostgres(env, cleanup, log);
 *   const target = await openTarget(cleanup, "postgres" in found ? found.postgres : null, "postgres");
 *   await seedTarget(kit, target, 100_000, 5);
 *   await target.drop();
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import pg from "pg";
import { openPgliteThread } from "../../src/db/connection/connect.ts";
import { copyInitialisedPgliteFolder } from "../helpers/pglite-folder.ts";
import type { Cleanup } from "./scenario-cleanup.ts";
import {
  type BackendName,
  type BenchKit,
  expectExit,
  type PostgresServer,
  runTool,
} from "./scenario-kit.ts";

export type { BackendName, PostgresServer } from "./scenario-kit.ts";

async function serverVersion(adminUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const r = await client.query<{ server_version: string }>("show server_version");
    return r.rows[0]?.server_version ?? "unknown";
  } finally {
    await client.end();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function postgresBinDir(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(a) - Number(b));
  const last = versions.at(-1);
  return last === undefined ? undefined : join(root, last, "bin");
}

/** uid/gid of the `postgres` account, needed because initdb refuses to run as root. */
function postgresAccount(): { uid: number; gid: number } | undefined {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith("postgres:"));
  const [, , uid, gid] = line?.split(":") ?? [];
  return uid && gid ? { uid: Number(uid), gid: Number(gid) } : undefined;
}

/** Starts a throwaway server on 127.0.0.1 (trust auth, no fsync) and registers its stop. */
async function startServer(cleanup: Cleanup): Promise<string> {
  const bin = postgresBinDir();
  if (!bin) throw new Error("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin");
  const dir = mkdtempSync(join(tmpdir(), "cm-bench-pg-"));
  const asRoot = process.getuid?.() === 0;
  const account = asRoot ? postgresAccount() : undefined;
  if (asRoot && !account) throw new Error("running as root and there is no postgres account");
  if (account) chownSync(dir, account.uid, account.gid);
  const as = account ? { uid: account.uid, gid: account.gid } : {};
  const data = join(dir, "data");
  const port = await freePort();
  const removeDir = cleanup.add(`remove ${dir}`, () =>
    rmSync(dir, { recursive: true, force: true }),
  );
  execFileSync(join(bin, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"], {
    ...as,
    stdio: "ignore",
  });
  const opts = `-h 127.0.0.1 -p ${port} -k ${dir} -F -c max_connections=200`;
  execFileSync(
    join(bin, "pg_ctl"),
    ["-D", data, "-l", join(dir, "server.log"), "-w", "-o", opts, "start"],
    {
      ...as,
      stdio: "ignore",
    },
  );
  cleanup.add(`stop PostgreSQL on port ${port}`, async () => {
    try {
      execFileSync(join(bin, "pg_ctl"), ["-D", data, "-m", "fast", "stop"], {
        ...as,
        stdio: "ignore",
      });
    } finally {
      await removeDir();
    }
  });
  return `postgres://postgres@127.0.0.1:${port}/postgres`;
}

/**
 * The PostgreSQL server to benchmark on, or why there is none. `env` is BENCH_DATABASE_URL /
 * TEST_DATABASE_URL as read by the runner.
 */
export async function findPostgres(
  env: { BENCH_DATABASE_URL?: string; TEST_DATABASE_URL?: string },
  cleanup: Cleanup,
  log: (m: string) => void,
): Promise<{ postgres: PostgresServer } | { reason: string }> {
  const origin = env.BENCH_DATABASE_URL
    ? "BENCH_DATABASE_URL"
    : env.TEST_DATABASE_URL
      ? "TEST_DATABASE_URL"
      : undefined;
  if (origin) {
    const adminUrl = env[origin] as string;
    try {
      return { postgres: { adminUrl, version: await serverVersion(adminUrl), origin } };
    } catch (err) {
      return {
        reason: `${origin} is set but the server cannot be reached: ${(err as Error).message}`,
      };
    }
  }
  try {
    log("neither BENCH_DATABASE_URL nor TEST_DATABASE_URL is set: starting a throwaway PostgreSQL");
    const adminUrl = await startServer(cleanup);
    return {
      postgres: {
        adminUrl,
        version: await serverVersion(adminUrl),
        origin: "started by the bench",
      },
    };
  } catch (err) {
    return {
      reason: `no BENCH_DATABASE_URL/TEST_DATABASE_URL and no server could be started (${(err as Error).message})`,
    };
  }
}

export interface DbTarget {
  readonly backend: BackendName;
  /** The CLI flags that select this database. */
  readonly args: readonly string[];
  drop(): Promise<void>;
}

/** A brand-new empty database on `backend`, dropped by `drop()` or by cleanup. */
export async function openTarget(
  cleanup: Cleanup,
  postgres: PostgresServer | null,
  backend: BackendName,
): Promise<DbTarget> {
  if (backend === "pglite") {
    const dir = mkdtempSync(join(tmpdir(), "cm-bench-pglite-"));
    const drop = cleanup.add(`remove ${dir}`, () => rmSync(dir, { recursive: true, force: true }));
    // A copy of a folder initialised once for the checkout: no initdb in each seeding.
    await copyInitialisedPgliteFolder(join(dir, "data"));
    return { backend, args: ["--data-dir", join(dir, "data")], drop };
  }
  if (!postgres) throw new Error("no PostgreSQL server for this bench run");
  const name = `cm_bench_${randomBytes(5).toString("hex")}`;
  const admin = new pg.Client({ connectionString: postgres.adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(postgres.adminUrl);
  url.pathname = `/${name}`;
  const drop = cleanup.add(`drop database ${name}`, async () => {
    const c = new pg.Client({ connectionString: postgres.adminUrl });
    await c.connect();
    try {
      await c.query(`drop database if exists ${name} with (force)`);
    } finally {
      await c.end();
    }
  });
  return { backend, args: ["--database-url", url.toString()], drop };
}

export interface SeedFigures {
  /** `db seed` process, start-up included. */
  readonly wall_s: number;
  /** The seeder's own figure (rows written, excluding process start-up). */
  readonly seeder_s: number;
  /** VACUUM (ANALYZE) and CHECKPOINT after the seed, PostgreSQL only (0 on PGlite). */
  readonly settle_s: number;
}

/** Seeds `identities` synthetic rows with `db seed` (the same ones the sandbox holds for `seed`). */
export async function seedTarget(
  kit: BenchKit,
  target: DbTarget,
  identities: number,
  seed: number,
): Promise<SeedFigures> {
  const run = await runTool(
    kit,
    [
      "db",
      "seed",
      "--identities",
      String(identities),
      "--seed",
      String(seed),
      "--json",
      ...target.args,
    ],
    {},
    30 * 60_000,
  );
  expectExit(run, [0], `db seed --identities ${identities} on ${target.backend}`);
  const out = run.summary as unknown as { seconds?: number; identities?: number } | null;
  if (out?.identities !== identities) {
    throw new Error(`db seed wrote ${out?.identities} identities, expected ${identities}`);
  }
  kit.log(`seeded ${identities} identities on ${target.backend} in ${run.wallS.toFixed(1)} s`);
  const settle_s = await settle(target);
  return {
    wall_s: Math.round(run.wallS * 10) / 10,
    seeder_s: out.seconds ?? Number.NaN,
    settle_s,
  };
}

/**
 * A source relation as a client's long-lived one is, on either backend: vacuumed (all-visible,
 * hint bits set), analysed and written back. Without this the measured run shares the machine
 * with the freshly loaded table's autovacuum (PostgreSQL), its first readers' hint-bit writes and
 * a checkpoint, none of which a settled production table has.
 */
async function settle(target: DbTarget): Promise<number> {
  const started = performance.now();
  const flag = (name: string) => target.args[target.args.indexOf(name) + 1] as string;
  if (target.backend === "pglite") {
    const handle = await openPgliteThread({ dataDir: flag("--data-dir") });
    try {
      await sql`vacuum (analyze)`.execute(handle.db);
      await sql`checkpoint`.execute(handle.db);
    } finally {
      await handle.close();
    }
  } else {
    const c = new pg.Client({ connectionString: flag("--database-url") });
    await c.connect();
    try {
      await c.query("vacuum (analyze)");
      await c.query("checkpoint");
    } finally {
      await c.end();
    }
  }
  return Math.round((performance.now() - started) / 100) / 10;
}
