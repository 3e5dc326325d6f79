/**
 * Never create on stale knowledge: a resumed apply re-reads the state of every pending action
 * before sending it. Between an interrupted apply and its resume, someone adds the very control a
 * pending create would make, through the platform's own UI (here: the sandbox's admin surface).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { sql } from "kysely";
import { syntheticIdentities } from "../../src/contract/index.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
import { collect, runCli, spawnCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { assertExactlyOnce, clientSellOnly } from "../helpers/platform-assertions.ts";
import { waitFor } from "../helpers/wait-for.ts";

const N = 1500;
const SEED = 23;
const expectedClient = [...syntheticIdentities(N, SEED)]
  .filter((r) => r.user_disabled)
  .map((r) => r.id);

for (const backend of backends) {
  describe(`apply --resume re-reads pending actions on ${backend.name}`, {
    timeout: 180_000,
  }, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;

    let rig: CliRig;

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED });
      ({ sandbox, target, env } = rig);
    });
    after(() => rig.close());

    it("controls added meanwhile to three identities whose creates are pending are adopted, not duplicated", async () => {
      const args = ["--yes", "--no-progress", "--rate", "25", "--concurrency", "4", ...target.args];
      // 1. An apply, stopped with SIGTERM while creates are under way.
      const child = spawnCli(["apply", ...args], env);
      const done = collect(child);
      await waitFor("15 creates", () => sandbox.stats().writes.creates >= 15);
      child.kill("SIGTERM");
      const stopped = await done;
      assert.equal(stopped.code, 130, stopped.stderr);
      const runId = /Run (\S+) \(apply\) started/.exec(stopped.stderr)?.[1];
      assert.ok(runId, stopped.stderr);

      // 2. Three identities whose creates are still pending get a CLIENT SELL_ONLY elsewhere.
      const h = await target.open();
      let chosen: string[];
      try {
        const pending = await sql<{ identity_id: string }>`
          select identity_id from controls_migration.actions
          where run_id = ${runId} and action = 'create' and status = 'pending'
          order by id desc limit 3`.execute(h.db);
        chosen = pending.rows.map((r) => r.identity_id);
      } finally {
        await h.close();
      }
      assert.equal(chosen.length, 3);
      for (const id of chosen) {
        assert.equal(clientSellOnly(sandbox, id).length, 0);
        const res = await fetch(`${sandbox.adminUrl}/identities/${id}/controls`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ type: "SELL_ONLY", set_by: "CLIENT", is_overridable: true }),
        });
        assert.equal(res.status, 200, await res.text());
      }

      // 3. The resume re-reads them before sending anything.
      const resumed = await runCli(
        [
          "apply",
          "--resume",
          runId,
          "--json",
          "--yes",
          "--no-progress",
          "--allow-rate-above-limit",
          "--rate",
          "200",
          ...target.args,
        ],
        env,
      );
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.match(
        resumed.stderr,
        /Re-reading \d+ pending actions of \d+ identities decided on an earlier read/,
      );
      assert.match(resumed.stderr, /Re-read \d+ pending actions: 3 creates adopted/);
      const summary = JSON.parse(resumed.stdout) as RunSummary;
      assert.ok(
        (summary.outcomes["succeeded:adopted"] ?? 0) >= 3,
        JSON.stringify(summary.outcomes),
      );

      for (const id of chosen)
        assert.equal(clientSellOnly(sandbox, id).length, 1, `duplicate on ${id}`);
      assertExactlyOnce(sandbox, expectedClient);
      assert.equal(sandbox.stats().integrity.identitiesWithDuplicateClientSellOnly, 0);
      const h2 = await target.open();
      try {
        const r = await sql<{ identity_id: string; outcome: string }>`
          select identity_id, outcome from controls_migration.actions
          where run_id = ${runId} and identity_id in (${sql.join(chosen)})`.execute(h2.db);
        assert.deepEqual(
          r.rows.map((x) => x.outcome),
          ["adopted", "adopted", "adopted"],
        );
      } finally {
        await h2.close();
      }
    });
  });
}
