import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { startSandbox } from "controls-sandbox";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { collect, runCli, spawnCli } from "../helpers/cli.ts";
import { seededTarget } from "../helpers/cli-rig.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { waitFor } from "../helpers/wait-for.ts";

const N = 2500;
const SEED = 11;
const expectedClient = [...syntheticIdentities(N, SEED)]
  .filter((r) => r.user_disabled)
  .map((r) => r.id);

async function setup(backendIndex: number, sandboxOptions: Parameters<typeof startSandbox>[0]) {
  const sandbox = await startSandbox({ port: 0, tokenRateLimitRps: 0, ...sandboxOptions });
  sandbox.seedIdentities(syntheticIdentities(N, SEED), {
    migratedFraction: 0,
    driftFraction: 0,
    seed: SEED,
  });
  const target = await seededTarget(backends[backendIndex]!, { identities: N, seed: SEED });
  const env = {
    API_BASE_URL: sandbox.apiUrl,
    OAUTH_TOKEN_URL: sandbox.tokenUrl,
    OAUTH_CLIENT_ID: sandbox.credentials.clientId,
    OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
  };
  return { sandbox, target, env };
}

/** Every expected identity holds exactly one active CLIENT SELL_ONLY; none holds two. */
function assertExactlyOnce(sandbox: Sandbox): void {
  for (const id of expectedClient) {
    const n = sandbox
      .controlsOf(id)
      .filter(
        (c) => c.type === "SELL_ONLY" && (c.set_by === "CLIENT" || c.set_by === "SET_BY_CLIENT"),
      ).length;
    assert.equal(n, 1, `identity ${id} holds ${n} client SELL_ONLY controls`);
  }
  assert.equal(sandbox.stats().integrity.identitiesWithDuplicateClientSellOnly, 0);
}

backends.forEach((backend, i) => {
  describe(`apply crash safety on ${backend.name}`, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;

    before(async () => {
      ({ sandbox, target, env } = await setup(i, { latencyMs: 15, rateLimitRps: 0 }));
    });
    after(async () => {
      await sandbox.close();
      await target.drop();
    });

    it("apply resumes after SIGKILL at several points without creating a duplicate control", async () => {
      const args = [
        "--yes",
        "--no-progress",
        "--concurrency",
        "6",
        "--rate",
        "300",
        "--allow-rate-above-limit",
        ...target.args,
      ];
      let runId: string | undefined;
      for (const stopAt of [30, 90, 160]) {
        const child = spawnCli(["apply", ...(runId ? ["--resume", runId] : []), ...args], env);
        const done = collect(child);
        await waitFor(`${stopAt} creates`, () => sandbox.stats().writes.creates >= stopAt);
        child.kill("SIGKILL");
        const r = await done;
        assert.equal(r.signal, "SIGKILL");
        runId ??= /Run (\S+) \(apply\) started/.exec(r.stderr)?.[1];
        assert.ok(runId, r.stderr);
      }
      const refused = await runCli(["apply", ...args], env);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, new RegExp(`--resume ${runId}`));

      const resumed = await runCli(["apply", "--resume", runId!, "--json", ...args], env);
      assert.equal(resumed.code, 0, resumed.stderr);
      assertExactlyOnce(sandbox);
      assert.equal(sandbox.stats().writes.creates, expectedClient.length);

      const again = await runCli(["reconcile", "--json", ...args], env);
      const summary = JSON.parse(again.stdout) as { status: string; exit_code: number };
      assert.equal(summary.status, "completed", again.stderr);
      // 0, or 2 when report-only findings are left for people; never a failure (1) or failed actions (3).
      assert.ok(
        again.code === 0 || again.code === 2,
        `reconcile exited ${again.code}: ${again.stderr}`,
      );
      assert.equal(summary.exit_code, again.code);
      assert.equal(
        sandbox.stats().writes.creates,
        expectedClient.length,
        "reconcile after a resumed apply writes nothing",
      );
    });
  });

  describe(`apply under injected faults on ${backend.name}`, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;

    before(async () => {
      ({ sandbox, target, env } = await setup(i, {
        ambiguousRate: 0.05,
        failRate: 0.05,
        rateLimitRps: 0,
      }));
    });
    after(async () => {
      await sandbox.close();
      await target.drop();
    });

    it("with 5% ambiguous writes and 5% server errors, apply leaves every control exactly once", async () => {
      const r = await runCli(
        [
          "apply",
          "--yes",
          "--json",
          "--no-progress",
          "--rate",
          "300",
          "--allow-rate-above-limit",
          "--retry-base-ms",
          "5",
          "--retry-cap-ms",
          "50",
          ...target.args,
        ],
        env,
      );
      assert.equal(r.code, 0, r.stderr);
      const s = JSON.parse(r.stdout);
      assert.ok(sandbox.stats().faults.ambiguous > 0, "faults were injected");
      assert.ok(
        (s.outcomes["succeeded:adopted"] ?? 0) > 0,
        "ambiguous creates were verified and adopted",
      );
      assertExactlyOnce(sandbox);
    });
  });

  describe(`apply against a rate-limited platform on ${backend.name}`, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;

    before(async () => {
      // 2 rps at first: the apply's first concurrent creates get a 429 however loaded the
      // machine is; the test raises the limit to 40 rps once the sandbox has answered one.
      ({ sandbox, target, env } = await setup(i, {
        rateLimitRps: 2,
        rateWindowS: 1,
        penaltyS: 2,
      }));
    });
    after(async () => {
      await sandbox.close();
      await target.drop();
    });

    it("honours a 429 penalty and still completes without a duplicate", async () => {
      const limited = () => Object.values(sandbox.stats().rateLimited).reduce((a, b) => a + b, 0);
      const child = spawnCli(
        [
          "apply",
          "--yes",
          "--json",
          "--no-progress",
          "--rate",
          "80",
          "--allow-rate-above-limit",
          "--concurrency",
          "16",
          "--penalty-s",
          "2",
          ...target.args,
        ],
        env,
      );
      const done = collect(child);
      await waitFor("a 429 answer", () => limited() >= 1);
      sandbox.setLimits({ rateLimitRps: 40 });
      const r = await done;
      assert.equal(r.code, 0, r.stderr);
      const s = JSON.parse(r.stdout);
      assert.ok(
        s.requests["POST /v2/identity/controls"].rate_limited +
          s.requests["GET /v2/identity/identities"].rate_limited >=
          1,
      );
      const stats = sandbox.stats();
      assert.ok(
        Object.values(stats.rateLimited).reduce((a, b) => a + b, 0) >= 1,
        "the sandbox answered 429",
      );
      assertExactlyOnce(sandbox);
    });
  });
});
