/**
 * `apply --plan P` re-reads the platform's legacy fields too (issue 27): a planned create whose
 * identity's `user_disabled` on the platform turned true after the plan waits for the platform's
 * own migration (`skipped:awaiting_platform_migration`), unless `--no-wait-for-platform`.
 */
import assert from "node:assert/strict";
import { readFileSync, rmSync } from "node:fs";
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

const N = 400;
const SEED = 47;
const flaggedByClient = [...syntheticIdentities(N, SEED)]
  .filter((r) => r.user_disabled)
  .map((r) => r.id);

for (const backend of backends) {
  describe(`apply --plan re-reads the platform's legacy fields before a create on ${backend.name}`, {
    timeout: 180_000,
  }, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;
    let rig: CliRig;
    const out = tempDir("cm-e2e-plan-legacy-");
    const cli = (args: string[]) => runCli([...args, ...target.args, "--no-progress"], env);

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED });
      ({ sandbox, target } = rig);
      // The default, waiting for the platform: test helpers' children do not wait unless told.
      env = { ...rig.env, CONTROLS_WAIT_FOR_PLATFORM: "true" };
    });
    after(async () => {
      await rig.close();
      rmSync(out, { recursive: true, force: true });
    });

    /** Plans with the platform's user_disabled false everywhere: every flagged identity is a create. */
    async function planAll(name: string): Promise<{ runId: string; toCreate: number }> {
      for (const id of flaggedByClient) sandbox.setLegacyFields(id, { user_disabled: false });
      const plan = await cli(["plan", "--state", "bulk", "--json", "--out", join(out, name)]);
      assert.equal(plan.code, 2, plan.stderr);
      const planned = JSON.parse(plan.stdout) as RunSummary;
      const toCreate = planned.findings.missing_client_control ?? 0;
      assert.equal(
        toCreate,
        flaggedByClient.filter((id) => !clientSellOnly(sandbox, id).length).length,
      );
      return { runId: planned.run_id, toCreate };
    }

    it("sends no create for an identity whose platform user_disabled turned true after the plan and records it as skipped:awaiting_platform_migration", async () => {
      const { runId, toCreate } = await planAll("plan-wait");
      assert.ok(toCreate > 20, `the plan has creates to do: ${toCreate}`);
      const turned = flaggedByClient
        .filter((id) => !clientSellOnly(sandbox, id).length)
        .slice(0, 3);
      for (const id of turned) sandbox.setLegacyFields(id, { user_disabled: true });
      const createsBefore = sandbox.stats().writes.creates;

      const apply = await cli([
        "apply",
        "--plan",
        runId,
        "--yes",
        "--json",
        "--out",
        join(out, "apply-wait"),
      ]);
      // Not the client's work: awaiting_platform_migration alone does not make the run exit 2.
      assert.equal(apply.code, 0, apply.stderr);
      const summary = JSON.parse(apply.stdout) as RunSummary;

      for (const id of turned)
        assert.equal(clientSellOnly(sandbox, id).length, 0, `no create for ${id}: ${apply.stderr}`);
      assert.equal(sandbox.stats().writes.creates - createsBefore, toCreate - turned.length);
      assert.equal(summary.outcomes["skipped:awaiting_platform_migration"], turned.length);
      const diff = readFileSync(join(out, "apply-wait", "diff.csv"), "utf8");
      for (const id of turned) {
        assert.match(diff, new RegExp(`${id},.*,create,awaiting_platform_migration,`), id);
      }
      assert.match(apply.stderr, /3 creates left to the platform's own migration/);
    });

    it("sends the create anyway with --no-wait-for-platform", async () => {
      const { runId, toCreate } = await planAll("plan-no-wait");
      const turned = flaggedByClient
        .filter((id) => !clientSellOnly(sandbox, id).length)
        .slice(0, 3);
      assert.equal(turned.length, 3);
      for (const id of turned) sandbox.setLegacyFields(id, { user_disabled: true });
      const createsBefore = sandbox.stats().writes.creates;

      const apply = await cli([
        "apply",
        "--plan",
        runId,
        "--no-wait-for-platform",
        "--yes",
        "--json",
        "--out",
        join(out, "apply-no-wait"),
      ]);
      assert.equal(apply.code, 0, apply.stderr);
      assertExactlyOnce(sandbox, turned);
      assert.equal(sandbox.stats().writes.creates - createsBefore, toCreate);
    });
  });
}
