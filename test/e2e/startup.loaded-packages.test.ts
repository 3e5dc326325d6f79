/**
 * Start-up at node's speed (issue 30): what a CLI child loads, recorded by a module hook
 * (`loaded-packages.ts`). `--help` renders the options table without zod; `status` on
 * PostgreSQL with no run reads its one statement through `pg`, without kysely. The children run the
 * CLI as ES modules (`MODULE_CLI_ENTRY`), which the hook sees; the installed command's bundle
 * initialises the same modules at the same dynamic imports.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { MODULE_CLI_ENTRY, runCli } from "../helpers/cli.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { packageTrace } from "../helpers/loaded-packages.ts";
import { type FaultProxy, startFaultProxy } from "../helpers/pg-fault-proxy.ts";

const postgres = backends.find((b) => b.name === "postgres");

describe("start-up: the packages a command line loads", () => {
  it("--help loads yargs but neither zod, kysely, pg nor pino, and still lists the global options", async () => {
    const trace = packageTrace();
    try {
      const r = await runCli(["--help"], trace.env, MODULE_CLI_ENTRY);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /Global options:/);
      assert.match(r.stdout, /--database-url/);
      const loaded = trace.packages();
      assert.ok(loaded.has("yargs"), `the hook saw: ${[...loaded].join(", ")}`);
      for (const heavy of ["zod", "kysely", "pg", "pino"]) {
        assert.ok(!loaded.has(heavy), `--help loaded ${heavy}`);
      }
    } finally {
      trace.close();
    }
  });

  it("a command still checks its options with zod: a bad --db-retry-s is refused by name", async () => {
    const trace = packageTrace();
    try {
      const r = await runCli(
        ["runs", "--db-retry-s", "soon", "--data-dir", "x"],
        trace.env,
        MODULE_CLI_ENTRY,
      );
      assert.equal(r.code, 1);
      assert.match(r.stderr, /--db-retry-s must be a number, got "soon"/);
      assert.ok(trace.packages().has("zod"));
    } finally {
      trace.close();
    }
  });
});

describe("start-up: status on PostgreSQL with no run", {
  skip: postgres ? false : "TEST_DATABASE_URL is not set",
}, () => {
  let target: TestTarget;
  let proxy: FaultProxy;

  before(async () => {
    target = await postgres!.target();
    const handle = await target.open({ migrate: true });
    await handle.close();
    proxy = await startFaultProxy(target.args[target.args.indexOf("--database-url") + 1] as string);
  });
  after(async () => {
    await proxy?.close();
    await target?.drop();
  });

  it("says no writer run has run, in one connection and one statement, loading pg but no kysely", async () => {
    const trace = packageTrace();
    try {
      const r = await runCli(["status", "--database-url", proxy.url], trace.env, MODULE_CLI_ENTRY);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /No apply, reconcile or revert has run on this database yet/);
      assert.equal(proxy.connections, 1);
      assert.equal(proxy.statements.length, 1, proxy.statements.join("\n---\n"));
      const loaded = trace.packages();
      assert.ok(loaded.has("pg"), `the hook saw: ${[...loaded].join(", ")}`);
      assert.ok(!loaded.has("kysely"), "status on PostgreSQL loaded kysely");
    } finally {
      trace.close();
    }
  });
});
