/**
 * Findings, and a writer's pending actions, are journaled while the listing runs (issue 13 §1).
 * An apply killed before its read was done has sent nothing: it is not resumable, and the next
 * apply drops its pending actions and starts afresh instead of refusing to start.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { sql } from "kysely";
import { collect, runCli, spawnCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { waitFor } from "../helpers/wait-for.ts";

const N = 6000;
const SEED = 41;
const LISTING = "GET /v2/identity/identities";

/**
 * Waits until the running apply has journaled pending actions, as `status --json` reports them:
 * from the journal on PostgreSQL, through the run's read-stage channel on PGlite (the run holds
 * the data folder).
 */
async function waitForPendingActions(target: TestTarget, env: Record<string, string>) {
  // Each read is a process of its own; on PGlite, status reads a file the run rewrites each
  // second. Reading again at once only loads a slow machine more.
  await waitFor(
    "a pending action journaled, as status --json reports it",
    async () => {
      const r = await runCli(["status", "--json", ...target.args], env);
      return r.code === 0 && Number(JSON.parse(r.stdout).actions?.pending ?? 0) > 0;
    },
    { intervalMs: 250 },
  );
}

const listed = (sandbox: Sandbox) =>
  Object.values(sandbox.stats().requests[LISTING] ?? {}).reduce((a, b) => a + b, 0);

for (const backend of backends) {
  describe(`an apply killed during its listing on ${backend.name}`, { timeout: 600_000 }, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;

    let rig: CliRig;

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED });
      ({ sandbox, target, env } = rig);
    });
    after(() => rig.close());

    it("is not resumable, and the next apply skips its pending actions and creates every missing control once", async () => {
      // One listing page a second: the source pass is over long before the listing.
      const slow = [
        "--state",
        "bulk",
        "--rate",
        "1",
        "--timeout-ms",
        "2000",
        "--yes",
        "--no-progress",
      ].concat(target.args);
      const child = spawnCli(["apply", ...slow], env);
      const done = collect(child);
      await waitFor("3 listing pages", () => listed(sandbox) >= 3);
      // The listing's next requests go unanswered until the journal shows pending actions.
      sandbox.setFaults({ hangRate: 1 });
      await waitForPendingActions(target, env);
      child.kill("SIGKILL");
      sandbox.setFaults({ hangRate: 0 });
      const killed = await done;
      const runId = /Run (\S+) \(apply\) started/.exec(killed.stderr)?.[1];
      assert.ok(runId, killed.stderr);
      assert.equal(sandbox.stats().writes.creates, 0);

      const h = await target.open();
      try {
        const run = await sql<{ source_rows_read: string | null; pending: string }>`
          select r.source_rows_read,
            (select count(*) from controls_migration.actions a
             where a.run_id = r.id and a.status = 'pending') as pending
          from controls_migration.runs r where r.id = ${runId}`.execute(h.db);
        assert.equal(run.rows[0]?.source_rows_read, null, "killed before its read was recorded");
        assert.ok(Number(run.rows[0]?.pending) > 0, "pending actions were journaled already");
      } finally {
        await h.close();
      }

      const resumed = await runCli(["apply", "--resume", runId, "--yes", ...target.args], env);
      assert.equal(resumed.code, 1, resumed.stderr);
      assert.match(resumed.stderr, /stopped before its read was done/);
      assert.equal(sandbox.stats().writes.creates, 0);

      const fresh = await runCli(
        ["apply", "--yes", "--no-progress", "--allow-rate-above-limit", "--rate", "500"].concat(
          target.args,
        ),
        env,
      );
      assert.equal(fresh.code, 0, fresh.stderr);
      assert.equal(sandbox.stats().integrity.identitiesWithDuplicateClientSellOnly, 0);
      const h2 = await target.open();
      try {
        const left = await sql<{ status: string; outcome: string | null; n: string }>`
          select status, outcome, count(*) as n from controls_migration.actions
          where run_id = ${runId} group by status, outcome`.execute(h2.db);
        assert.deepEqual(
          left.rows.map((r) => [r.status, r.outcome]),
          [["skipped", "read_not_finished"]],
        );
      } finally {
        await h2.close();
      }
    });
  });
}
