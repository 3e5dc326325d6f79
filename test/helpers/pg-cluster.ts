/**
 * A throwaway PostgreSQL cluster of a test's own, on 127.0.0.1, for faults that must not touch the
 * shared server: stopping and restarting the server. Started the way `.ci/run` starts one (initdb
 * with trust auth as the `postgres` account when running as root, no fsync). `available()` says
 * whether the server binaries exist; tests skip with that reason otherwise.
 *
 * @example
 *   const cluster = await startCluster();
 *   const url = await cluster.createDatabase();
 *   await cluster.restart();
 *   await cluster.destroy();
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

export interface Cluster {
  /** Superuser URL of the cluster's `postgres` database. */
  readonly adminUrl: string;
  readonly port: number;
  /** A fresh database on the cluster; returns its URL. */
  createDatabase(): Promise<string>;
  /** `pg_ctl stop -m fast`: every session is terminated, then the server exits. */
  stop(): void;
  start(): void;
  /** `pg_ctl restart -m fast`. */
  restart(): void;
  destroy(): Promise<void>;
}

/** The server binaries: env PG_BIN, `pg_config --bindir`, or the newest Debian install. */
export function postgresBinDir(): string | undefined {
  const candidates: string[] = [];
  if (process.env.PG_BIN) candidates.push(process.env.PG_BIN);
  try {
    candidates.push(execFileSync("pg_config", ["--bindir"], { encoding: "utf8" }).trim());
  } catch {
    // no pg_config on PATH
  }
  const debian = "/usr/lib/postgresql";
  if (existsSync(debian)) {
    for (const v of readdirSync(debian).sort((a, b) => Number(b) - Number(a)))
      candidates.push(join(debian, v, "bin"));
  }
  return candidates.find(
    (dir) => existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl")),
  );
}

/** Why no cluster can be started here, or undefined when one can. */
export function clusterUnavailable(): string | undefined {
  if (!postgresBinDir()) return "no PostgreSQL server binaries (set PG_BIN)";
  if (process.getuid?.() === 0 && !postgresAccount())
    return "running as root without a postgres account for initdb";
  return undefined;
}

function postgresAccount(): { uid: number; gid: number } | undefined {
  try {
    const line = readFileSync("/etc/passwd", "utf8")
      .split("\n")
      .find((l) => l.startsWith("postgres:"));
    const [, , uid, gid] = line?.split(":") ?? [];
    return uid && gid ? { uid: Number(uid), gid: Number(gid) } : undefined;
  } catch {
    return undefined;
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

export async function startCluster(): Promise<Cluster> {
  const bin = postgresBinDir();
  if (!bin) throw new Error("no PostgreSQL server binaries (set PG_BIN)");
  const dir = mkdtempSync(join(tmpdir(), "cm-pg-cluster-"));
  const account = process.getuid?.() === 0 ? postgresAccount() : undefined;
  if (account) chownSync(dir, account.uid, account.gid);
  const as = account ? { uid: account.uid, gid: account.gid } : {};
  const data = join(dir, "data");
  const port = await freePort();
  const run = (tool: string, args: string[]) =>
    execFileSync(join(bin, tool), args, { ...as, stdio: "ignore" });
  const opts = `-h 127.0.0.1 -p ${port} -k ${dir} -F -c max_connections=100`;
  const logFile = join(dir, "server.log");
  run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
  const start = () => run("pg_ctl", ["-D", data, "-l", logFile, "-w", "-o", opts, "start"]);
  start();
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    adminUrl,
    port,
    async createDatabase() {
      const name = `cm_fault_${randomBytes(5).toString("hex")}`;
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`create database ${name}`);
      } finally {
        await c.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    stop: () => run("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]),
    start,
    restart: () =>
      run("pg_ctl", ["-D", data, "-l", logFile, "-m", "fast", "-w", "-o", opts, "restart"]),
    async destroy() {
      try {
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Terminates every session on `database` except the caller's, as `pg_terminate_backend` from an
 * admin session does: what a DBA, a failover or a connection killer does to the tool. Returns how
 * many sessions were terminated.
 */
/**
 * Resolves once a session of `database` is running a statement that contains `text` (from
 * pg_stat_activity, polled every 10 ms for up to 30 s): the event a test waits for before it
 * interrupts that statement.
 */
export async function waitForRunningStatement(
  adminUrl: string,
  database: string,
  text: string,
): Promise<void> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    const end = Date.now() + 30_000;
    for (;;) {
      const r = await c.query(
        `select 1 from pg_stat_activity
         where datname = $1 and state = 'active' and pid <> pg_backend_pid()
           and strpos(query, $2) > 0`,
        [database, text],
      );
      if ((r.rowCount ?? 0) > 0) return;
      if (Date.now() > end) throw new Error(`no session of ${database} ran "${text}" in 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    await c.end();
  }
}

export async function terminateBackends(adminUrl: string, database: string): Promise<number> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    const r = await c.query<{ n: number }>(
      `select count(*)::int as n from (
         select pg_terminate_backend(pid, 5000) from pg_stat_activity
         where datname = $1 and pid <> pg_backend_pid()) t`,
      [database],
    );
    return r.rows[0]?.n ?? 0;
  } finally {
    await c.end();
  }
}

/** The database name of a connection URL. */
export const databaseOf = (url: string) => new URL(url).pathname.slice(1);
