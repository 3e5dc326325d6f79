/**
 * `apply --plan P`: the plan was read before it was approved, so its state is read again before any
 * create is sent, and that re-read costs listing pages on the identities path, not one read per
 * create on the path the creates share (issue 13 §2).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { syntheticIdentities } from "../../src/contract/index.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
import { runCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { assertExactlyOnce, clientSellOnly } from "../helpers/platform-assertions.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const N = 3000;
const SEED = 31;
const CONTROLS = "/v2/identity/controls";
const flaggedByClient = [...syntheticIdentities(N, SEED)]
  .filter((r) => r.user_disabled)
  .map((r) => r.id);

/** Every request the sandbox answered on the controls path (GET, POST and DELETE share it). */
const controlsPathRequests = (sandbox: Sandbox) =>
  Object.entries(sandbox.stats().requests)
    .filter(([route]) => route.endsWith(` ${CONTROLS}`) || route.includes(`${CONTROLS}/`))
    .reduce((n, [, byStatus]) => n + Object.values(byStatus).reduce((a, b) => a + b, 0), 0);

for (const backend of backends) {
  describe(`apply --plan re-reads the plan's state at listing cost on ${backend.name}`, {
    timeout: 180_000,
  }, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;
    const out = tempDir("cm-e2e-plan-");
    const cli = (args: string[]) => runCli([...args, ...target.args, "--no-progress"], env);

    let rig: CliRig;

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED });
      ({ sandbox, target, env } = rig);
    });
    after(() => rig.close());

    it("never creates for an identity whose control appeared after the plan, and spends at most 1.01 controls-path requests per create", async () => {
      const plan = await cli(["plan", "--state", "bulk", "--json", "--out", join(out, "plan")]);
      assert.equal(plan.code, 2, plan.stderr);
      const planned = JSON.parse(plan.stdout) as RunSummary;
      const toCreate = planned.findings.missing_client_control ?? 0;
      assert.ok(toCreate > 100, `the plan has creates to do: ${toCreate}`);

      // After the plan, someone adds the very control it would create, on three identities.
      const late = flaggedByClient.slice(0, 3);
      for (const id of late) {
        assert.equal(clientSellOnly(sandbox, id).length, 0);
        sandbox.addControl(id, { type: "SELL_ONLY", set_by: "CLIENT", is_overridable: true });
      }
      const requestsBefore = controlsPathRequests(sandbox);
      const createsBefore = sandbox.stats().writes.creates;

      const apply = await cli([
        "apply",
        "--plan",
        planned.run_id,
        "--yes",
        "--json",
        "--out",
        join(out, "apply"),
      ]);
      assert.equal(apply.code, 0, apply.stderr);

      for (const id of late) {
        assert.equal(clientSellOnly(sandbox, id).length, 1, `no second control on ${id}`);
      }
      const creates = sandbox.stats().writes.creates - createsBefore;
      assert.equal(creates, toCreate - late.length);
      assertExactlyOnce(sandbox, flaggedByClient);

      const perCreate = (controlsPathRequests(sandbox) - requestsBefore) / creates;
      assert.ok(perCreate <= 1.01, `controls-path requests per create: ${perCreate}`);
      assert.match(
        apply.stderr,
        /Re-reading \d+ pending actions .* with the (bulk|filtered) strategy/,
      );
    });
  });
}
