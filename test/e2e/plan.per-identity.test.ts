import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Sandbox, startSandbox } from "controls-sandbox";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { runCli } from "../helpers/cli.ts";
import { seededTarget } from "../helpers/cli-rig.ts";
import { backends, type TestTarget } from "../helpers/db.ts";

const N = 1000;
const SEED = 9;

for (const backend of backends) {
  describe(`a per-identity plan on ${backend.name}`, { timeout: 120_000 }, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    before(async () => {
      sandbox = await startSandbox({ port: 0, rateLimitRps: 0, tokenRateLimitRps: 0 });
      sandbox.seedIdentities(syntheticIdentities(N, SEED), { migratedFraction: 0.5, seed: SEED });
      target = await seededTarget(backend, { identities: N, seed: SEED });
    });
    after(async () => {
      await sandbox.close();
      await target.drop();
    });

    it("reads each candidate's controls and prints no MaxListenersExceededWarning", async () => {
      const r = await runCli(
        [
          "plan",
          "--state",
          "per-identity",
          "--no-progress",
          "--allow-rate-above-limit",
          "--rate",
          "1000",
          ...target.args,
        ],
        {
          API_BASE_URL: sandbox.apiUrl,
          OAUTH_TOKEN_URL: sandbox.tokenUrl,
          OAUTH_CLIENT_ID: sandbox.credentials.clientId,
          OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
        },
      );
      assert.equal(r.code, 2, r.stderr);
      const reads = Object.values(
        sandbox.stats().requests["GET /v2/identity/controls"] ?? {},
      ).reduce((a, b) => a + b, 0);
      assert.ok(reads > 50, `per-identity reads: ${reads}`);
      assert.doesNotMatch(r.stderr, /MaxListenersExceededWarning|Possible EventTarget memory leak/);
    });
  });
}
