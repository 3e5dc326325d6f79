/**
 * A token's life during an apply, through the CLI against the sandbox over HTTP: a token that
 * expires every two seconds, and every token revoked while creates are under way. Either way the
 * apply gets a new token, makes every create once and ends with exit 0. Each test has a rig of
 * its own: neither depends on the other having run.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { collect, runCli, spawnCli } from "../helpers/cli.ts";
import { startCliRig } from "../helpers/cli-rig.ts";
import { backends } from "../helpers/db.ts";
import { assertExactlyOnce } from "../helpers/platform-assertions.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import { waitFor } from "../helpers/wait-for.ts";

const N = 1500;
const SEED = 71;
const expectedClient = [...syntheticIdentities(N, SEED)]
  .filter((r) => r.user_disabled)
  .map((r) => r.id);

for (const backend of backends) {
  describe(`an apply across token expiry and revocation on ${backend.name}`, {
    timeout: 300_000,
  }, () => {
    const out = tempDir("cm-token-life-");
    const apply = (args: readonly string[], name: string) => [
      "apply",
      "--yes",
      "--no-progress",
      "--rate",
      "40",
      "--out",
      join(out, `${backend.name}-${name}`),
      ...args,
    ];

    it("an apply whose tokens expire every 2 s takes new ones and makes every create exactly once, exit 0", async () => {
      const rig = await startCliRig(backend, {
        identities: N,
        seed: SEED,
        sandbox: { tokenTtlS: 2 },
      });
      try {
        const r = await runCli(apply(rig.target.args, "expiry"), rig.env);
        assert.equal(r.code, 0, r.stderr);
        assert.ok(rig.sandbox.stats().tokensIssued >= 2, "the apply outlived its first token");
        assertExactlyOnce(rig.sandbox, expectedClient, "after the apply");
      } finally {
        await rig.close();
      }
    });

    it("an apply whose tokens are revoked while creates are under way takes a new one and makes every create exactly once, exit 0", async () => {
      const rig = await startCliRig(backend, { identities: N, seed: SEED });
      try {
        const done = collect(spawnCli(apply(rig.target.args, "revoked"), rig.env));
        await waitFor("20 creates", () => rig.sandbox.stats().writes.creates >= 20);
        const issued = rig.sandbox.stats().tokensIssued;
        rig.sandbox.revokeTokens();
        const r = await done;
        assert.equal(r.code, 0, r.stderr);
        assert.ok(
          rig.sandbox.stats().tokensIssued > issued,
          "a token was taken after the revocation",
        );
        assertExactlyOnce(rig.sandbox, expectedClient, "after the apply");
      } finally {
        await rig.close();
      }
    });
  });
}
