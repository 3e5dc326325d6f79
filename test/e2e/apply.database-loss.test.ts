/**
 * `apply` through the CLI while its database goes away: sessions killed by pg_terminate_backend
 * (on the shared server, only this test's database), a server restart and a server that stays down
 * (on a cluster of the test's own). PostgreSQL only: PGlite is embedded.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Sandbox, startSandbox } from "controls-sandbox";
import { loadSourceConfig } from "../../src/config.ts";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { createPgPool, wrapPgPool } from "../../src/db/connection/connect.ts";
import { migrateToLatest } from "../../src/db/connection/migrate.ts";
import { seedSource } from "../../src/db/source/seed.ts";
import { silentLogger } from "../../src/log.ts";
import { collect, runCli, spawnCli } from "../helpers/cli.ts";
import { backends } from "../helpers/db.ts";
import {
  type Cluster,
  clusterUnavailable,
  databaseOf,
  startCluster,
  terminateBackends,
} from "../helpers/pg-cluster.ts";
import { waitFor } from "../helpers/wait-for.ts";

const N = 5000;
const SEED = 31;
const ROWS = [...syntheticIdentities(N, SEED)];
const EXPECTED = ROWS.filter((r) => r.user_disabled).map((r) => r.id);
const STACK_LINE = /^\s+at .+\(.+:\d+:\d+\)$/m;
const ARGS = [
  "--yes",
  "--no-progress",
  "--allow-rate-above-limit",
  "--rate",
  "150",
  "--concurrency",
  "6",
];
const adminUrl = process.env.TEST_DATABASE_URL || undefined;
const postgres = backends.find((b) => b.name === "postgres");

async function workload(databaseUrl: string) {
  const sandbox = await startSandbox({ port: 0, rateLimitRps: 0, tokenRateLimitRps: 0 });
  sandbox.seedIdentities(ROWS, { migratedFraction: 0, driftFraction: 0, seed: SEED });
  const h = wrapPgPool(createPgPool(databaseUrl));
  try {
    await migrateToLatest(h.db, silentLogger);
    await seedSource(h.db, loadSourceConfig({}, {}), { identities: N, seed: SEED });
  } finally {
    await h.close();
  }
  const env = {
    API_BASE_URL: sandbox.apiUrl,
    OAUTH_TOKEN_URL: sandbox.tokenUrl,
    OAUTH_CLIENT_ID: sandbox.credentials.clientId,
    OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
  };
  return { sandbox, env, args: [...ARGS, "--database-url", databaseUrl] };
}

/** Duplicates and missing controls, from what the platform holds. */
function tally(sandbox: Sandbox) {
  let missing = 0;
  let duplicates = 0;
  for (const id of EXPECTED) {
    const n = sandbox
      .controlsOf(id)
      .filter((c) => c.type === "SELL_ONLY" && /CLIENT$/.test(c.set_by)).length;
    if (n === 0) missing += 1;
    if (n > 1) duplicates += n - 1;
  }
  return { missing, duplicates };
}

async function waitForCreates(sandbox: Sandbox, n: number, child: { exitCode: number | null }) {
  await waitFor(`${n} creates`, () => {
    if (child.exitCode !== null) throw new Error(`apply ended before ${n} creates`);
    return sandbox.stats().writes.creates >= n;
  });
}

describe("apply while its database sessions are killed", {
  skip: postgres && adminUrl ? false : "needs TEST_DATABASE_URL",
  timeout: 300_000,
}, () => {
  it("finishes with exit 0, every control exactly once and no stack trace after pg_terminate_backend of all its sessions three times", async () => {
    const target = await postgres!.target();
    const url = target.args[1]!;
    const w = await workload(url);
    try {
      const child = spawnCli(["apply", ...w.args], w.env);
      const done = collect(child);
      let terminated = 0;
      for (const at of [80, 220, 360]) {
        await waitForCreates(w.sandbox, at, child);
        terminated += await terminateBackends(adminUrl!, databaseOf(url));
      }
      const r = await done;
      assert.ok(terminated >= 3, `sessions terminated: ${terminated}`);
      assert.equal(r.code, 0, r.stderr.slice(-3000));
      assert.doesNotMatch(r.stderr, STACK_LINE);
      // A termination lands on a query in flight (the connection is lost, then back) or on idle
      // sessions, where only the writer lock's session notices; either way it is said and healed.
      assert.match(
        r.stderr,
        /WARN\s+Lost the database (connection|session holding the writer lock)/,
      );
      const count = (re: RegExp) => r.stderr.match(re)?.length ?? 0;
      assert.equal(
        count(/Lost the database connection/g),
        count(/Database connection back after/g),
        "every lost connection comes back",
      );
      assert.equal(
        count(/Lost the database session holding the writer lock/g),
        count(/Took the writer lock again/g),
        "every lost writer lock is taken again",
      );
      assert.deepEqual(tally(w.sandbox), { missing: 0, duplicates: 0 });
    } finally {
      await w.sandbox.close();
      await target.drop();
    }
  });
});

describe("apply while its PostgreSQL server restarts or stays down", {
  skip: (postgres ? false : "needs TEST_DATABASE_URL") || clusterUnavailable() || false,
  timeout: 300_000,
}, () => {
  let cluster: Cluster;
  before(async () => {
    cluster = await startCluster();
  });
  after(() => cluster?.destroy());

  it("survives a server restart in the middle of the creates: exit 0, every control exactly once", async () => {
    const w = await workload(await cluster.createDatabase());
    try {
      const child = spawnCli(["apply", ...w.args], w.env);
      const done = collect(child);
      await waitForCreates(w.sandbox, 150, child);
      cluster.restart();
      const r = await done;
      assert.equal(r.code, 0, r.stderr.slice(-3000));
      assert.doesNotMatch(r.stderr, STACK_LINE);
      assert.match(r.stderr, /Lost the database connection/);
      assert.deepEqual(tally(w.sandbox), { missing: 0, duplicates: 0 });
    } finally {
      await w.sandbox.close();
    }
  });

  it("stops after --db-retry-s with the command that resumes it, and the resume finishes the run", async () => {
    const w = await workload(await cluster.createDatabase());
    try {
      const child = spawnCli(["apply", ...w.args, "--db-retry-s", "3"], w.env);
      const done = collect(child);
      await waitForCreates(w.sandbox, 150, child);
      cluster.stop();
      const r = await done;
      cluster.start();
      assert.equal(r.code, 1, r.stderr.slice(-3000));
      assert.doesNotMatch(r.stderr, STACK_LINE);
      const runId = /Run (\S+) \(apply\) started/.exec(r.stderr)?.[1];
      assert.ok(runId);
      assert.match(
        r.stderr,
        new RegExp(
          `ERROR Lost the database connection at \\S+Z \\(PostgreSQL 127\\.0\\.0\\.1:${cluster.port}/\\w+\\) and could not get it back within 3 s \\(--db-retry-s\\): .+ resume with: controls-migrate apply --resume ${runId}`,
        ),
      );
      const runs = await runCli(["runs", ...w.args.slice(-2)], w.env);
      assert.match(runs.stdout, new RegExp(`${runId}\\s+apply\\s+interrupted`));
      const resumed = await runCli(["apply", "--resume", runId, ...w.args], w.env);
      assert.equal(resumed.code, 0, resumed.stderr.slice(-3000));
      assert.deepEqual(tally(w.sandbox), { missing: 0, duplicates: 0 });
    } finally {
      await w.sandbox.close();
    }
  });
});
