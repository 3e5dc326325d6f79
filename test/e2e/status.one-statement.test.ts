/**
 * `status` on PostgreSQL, as an operator's watch loop or a cron wrapper calls it: one connection,
 * one statement, counted by a TCP proxy in front of the server.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { runCli } from "../helpers/cli.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { type FaultProxy, startFaultProxy } from "../helpers/pg-fault-proxy.ts";

const postgres = backends.find((b) => b.name === "postgres");

describe("status on PostgreSQL", {
  skip: postgres ? false : "TEST_DATABASE_URL is not set",
}, () => {
  let target: TestTarget;
  let proxy: FaultProxy;
  let url: string;

  before(async () => {
    target = await postgres!.target();
    const handle = await target.open({ migrate: true });
    try {
      // An apply left running by a process that is gone (it holds no writer lock).
      await sql`insert into controls_migration.runs
        (id, mode, status, dry_run, pid, host, started_at, options, tool_version)
        values ('20261126-010000-dead', 'apply', 'running', false, 1, 'gone', now(),
                '{"rate": 40}', '0.1.0')`.execute(handle.db);
      await sql`insert into controls_migration.actions
          (run_id, identity_id, action, control_type, control_key, status)
        select '20261126-010000-dead', 'id-' || g, 'create', 'SELL_ONLY', 'SELL_ONLY:client',
               case when g <= 3 then 'succeeded' else 'pending' end
        from generate_series(1, 5) g`.execute(handle.db);
    } finally {
      await handle.close();
    }
    url = target.args[target.args.indexOf("--database-url") + 1] as string;
    proxy = await startFaultProxy(url);
  });
  after(async () => {
    await proxy?.close();
    await target?.drop();
  });

  it("opens one connection and runs one statement, marks the dead run interrupted and counts its actions", async () => {
    const r = await runCli(["status", "--json", "--database-url", proxy.url]);
    assert.equal(r.code, 0, r.stderr);
    const view = JSON.parse(r.stdout) as {
      run_id: string;
      status: string;
      actions: { total: number; succeeded: number; pending: number };
    };
    assert.equal(view.run_id, "20261126-010000-dead");
    assert.equal(view.status, "interrupted");
    assert.deepEqual([view.actions.total, view.actions.succeeded, view.actions.pending], [5, 3, 2]);
    assert.match(r.stderr, /Marked 1 run\(s\) interrupted/);
    assert.equal(proxy.connections, 1);
    assert.equal(proxy.statements.length, 1, proxy.statements.join("\n---\n"));
  });
});
