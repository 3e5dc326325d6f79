/**
 * Issue 26 §2: a run is bound to the platform it started with. A resume given another platform is
 * refused, naming both, before anything is read or sent; the run stays resumable, and resumed at
 * its own platform it leaves no candidate without its control.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { startSandbox } from "controls-sandbox";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { collect, runCli, spawnCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends } from "../helpers/db.ts";
import { waitFor } from "../helpers/wait-for.ts";

const N = 300;
const SEED = 2626;
const flagged = [...syntheticIdentities(N, SEED)].filter((r) => r.user_disabled).map((r) => r.id);

backends.forEach((backend) => {
  describe(`a resume bound to its platform on ${backend.name}`, () => {
    let rig: CliRig;
    let other: Sandbox;
    let out: string;
    let n = 0;
    const outArgs = () => ["--no-progress", "--out", join(out, String(++n))];

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED });
      other = await startSandbox({ port: 0, rateLimitRps: 0, tokenRateLimitRps: 0 });
      other.seedIdentities(syntheticIdentities(N, SEED), { migratedFraction: 0, seed: SEED });
      out = mkdtempSync(join(tmpdir(), "ledger-binding-"));
    });
    after(async () => {
      await rig.close();
      await other.close();
      rmSync(out, { recursive: true, force: true });
    });

    it("refuses a resume at another platform naming both API URLs, then resumes at its own with 0 candidates missing", async () => {
      const { sandbox, target, env } = rig;
      const child = spawnCli(["apply", "--yes", "--rate", "10", ...outArgs(), ...target.args], env);
      const done = collect(child);
      await waitFor("3 creates", () => sandbox.stats().writes.creates >= 3);
      child.kill("SIGTERM");
      const stopped = await done;
      assert.equal(stopped.code, 130, stopped.stderr);
      const runId = /Run (\S+) \(apply\) started/.exec(stopped.stderr)?.[1];
      assert.ok(runId, stopped.stderr);

      const elsewhere = {
        API_BASE_URL: other.apiUrl,
        OAUTH_TOKEN_URL: other.tokenUrl,
        OAUTH_CLIENT_ID: other.credentials.clientId,
        OAUTH_CLIENT_SECRET: other.credentials.clientSecret,
      };
      const refused = await runCli(
        ["apply", "--resume", runId, "--yes", ...outArgs(), ...target.args],
        elsewhere,
      );
      assert.equal(refused.code, 1, refused.stderr);
      assert.ok(
        refused.stderr.includes(
          `API URL (--api-url): the run's ${sandbox.apiUrl}, this invocation's ${other.apiUrl}`,
        ),
        refused.stderr,
      );
      assert.match(refused.stderr, /the run stays resumable/);
      assert.doesNotMatch(refused.stderr, new RegExp(other.credentials.clientSecret));
      assert.equal(other.stats().writes.creates, 0, "nothing was sent to the other platform");

      const resumed = await runCli(
        ["apply", "--resume", runId, "--yes", ...outArgs(), ...target.args],
        env,
      );
      assert.equal(resumed.code, 0, resumed.stderr);
      const missing = flagged.filter(
        (id) =>
          !sandbox
            .controlsOf(id)
            .some((c) => c.type === "SELL_ONLY" && /CLIENT/.test(c.set_by) && c.is_overridable),
      );
      assert.ok(flagged.length > 0);
      assert.deepEqual(missing, [], "every flagged identity holds its client SELL_ONLY");
      assert.equal(sandbox.stats().integrity.identitiesWithDuplicateClientSellOnly, 0);
    });
  });
});
