/**
 * The platform's own migration wins a race against a create: through a proxy over real HTTP, the
 * tool's first three creates (its concurrency) are held after it re-read their identities and sent
 * the POST; while
 * they are held, the platform makes the very control each would create (as its migration does),
 * then the POSTs go on. The platform accepts duplicates here (`duplicatePolicy` allow), so the
 * tool cannot avoid making them: what it owes the operator is to report each duplicate and to
 * remove it on `reconcile --prune`, leaving every identity with exactly one CLIENT SELL_ONLY.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { syntheticIdentities } from "../../src/contract/index.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
import { collect, runCli, spawnCli } from "../helpers/cli.ts";
import { startCliRig } from "../helpers/cli-rig.ts";
import { backends } from "../helpers/db.ts";
import { startProxy } from "../helpers/http-proxy.ts";
import { assertExactlyOnce, clientSellOnly } from "../helpers/platform-assertions.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import { waitFor } from "../helpers/wait-for.ts";

const N = 300;
const SEED = 83;
const RACED = 3;
const expectedClient = [...syntheticIdentities(N, SEED)]
  .filter((r) => r.user_disabled)
  .map((r) => r.id);

const isCreate = (r: { method: string; url: string }) =>
  r.method === "POST" && r.url.startsWith("/v2/identity/controls");

for (const backend of backends) {
  describe(`the platform's migration creating a control between the tool's re-read and its POST on ${backend.name}`, {
    timeout: 300_000,
  }, () => {
    it("every duplicate the race made is reported by reconcile and pruned to one, leaving every identity with exactly one CLIENT SELL_ONLY", async (t) => {
      const out = tempDir("cm-platform-race-");
      const rig = await startCliRig(backend, { identities: N, seed: SEED });
      const proxy = await startProxy(rig.sandbox.apiUrl);
      try {
        const env = { ...rig.env, API_BASE_URL: proxy.url };
        const held = new Set<string>();
        proxy.holdWhen = (r) => {
          const id = isCreate(r) ? (JSON.parse(r.body) as { identity_id: string }).identity_id : "";
          if (!id || (held.size >= RACED && !held.has(id))) return false;
          held.add(id);
          return true;
        };
        const args = ["--yes", "--no-progress", "--state", "bulk", ...rig.target.args];
        const applied = collect(
          spawnCli(
            ["apply", "--concurrency", String(RACED), "--out", join(out, "apply"), ...args],
            env,
          ),
        );
        // As many creates in flight as the apply sends at once, each held after its re-read.
        await waitFor(`${RACED} creates held`, () => held.size >= RACED);
        const raced = [...held];
        assert.equal(raced.length, RACED);
        for (const id of raced) {
          assert.equal(clientSellOnly(rig.sandbox, id).length, 0, id);
          rig.sandbox.addControl(id, {
            type: "SELL_ONLY",
            set_by: "CLIENT",
            is_overridable: true,
            reason: "migrated from user_disabled",
          });
        }
        proxy.holdWhen = () => false;
        proxy.release();
        const a = await applied;
        assert.ok([0, 2].includes(a.code ?? -1), `apply ended ${a.code}: ${a.stderr}`);
        const doubled = raced.filter((id) => clientSellOnly(rig.sandbox, id).length > 1);
        t.diagnostic(
          `raced ${raced.length}; left with two CLIENT SELL_ONLY after apply: ${doubled.length}`,
        );

        const r = await runCli(
          ["reconcile", "--prune", "--json", "--out", join(out, "reconcile"), ...args],
          env,
        );
        assert.ok([0, 2].includes(r.code ?? -1), `reconcile ended ${r.code}: ${r.stderr}`);
        const summary = JSON.parse(r.stdout) as RunSummary;
        assert.equal(
          summary.findings.duplicate_client_control ?? 0,
          doubled.length,
          "each duplicate the race left is reported",
        );
        assertExactlyOnce(rig.sandbox, expectedClient, "after reconcile --prune");
      } finally {
        await proxy.close();
        await rig.close();
      }
    });
  });
}
