/**
 * Issue 51 §5: the wait for the platform is honest. A plan records its sightings (so the wait
 * counts from the first run that read the platform, not the first apply); and once the wait has
 * expired, each create is preceded by a read of the identity's controls: an identity the platform's
 * own migration served after the run read its state (here, right after the listing's answer, seen
 * through a proxy) is adopted, never given a second CLIENT SELL_ONLY.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import type { Sandbox } from "controls-sandbox";
import { sql } from "kysely";
import { IDENTITY_PATHS, syntheticIdentities } from "../../src/contract/index.ts";
import { TOOL_TABLES } from "../../src/db/schema.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
import { runCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends } from "../helpers/db.ts";
import { startProxy, type TestProxy } from "../helpers/http-proxy.ts";

const N = 300;
const SEED = 5166;
const WAIT_S = 1;
const MIGRATED = 5;
const awaited = [...syntheticIdentities(N, SEED)].filter((r) => r.user_disabled).map((r) => r.id);
const clientSellOnly = (sandbox: Sandbox, id: string) =>
  sandbox
    .controlsOf(id)
    .filter((c) => c.type === "SELL_ONLY" && !c.deleted_at && /CLIENT/.test(c.set_by));

for (const backend of backends) {
  describe(`an honest wait for the platform on ${backend.name}`, () => {
    let rig: CliRig;
    let proxy: TestProxy;
    let out: string;
    let n = 0;
    const outArgs = () => [
      "--no-progress",
      "--json",
      "--state",
      "bulk",
      "--out",
      join(out, String(++n)),
    ];

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED });
      proxy = await startProxy(rig.sandbox.apiUrl);
      out = await mkdtemp(join(tmpdir(), "cm-wait-honest-"));
    });
    after(async () => {
      await proxy.close();
      await rig.close();
      await rm(out, { recursive: true, force: true });
    });

    it("records sightings at plan, and adopts instead of duplicating what the platform migrated between the read and the create", async () => {
      const { sandbox, target } = rig;
      const env = { ...rig.env, API_BASE_URL: proxy.url, CONTROLS_WAIT_FOR_PLATFORM: "true" };
      const plan = await runCli(["plan", ...outArgs(), ...target.args], env);
      assert.ok(plan.code === 0 || plan.code === 2, plan.stderr);
      const h = await target.open();
      const seen = await sql<{ age: number; n: number }>`
        select extract(epoch from now() - max(first_seen_at))::float8 as age, count(*)::int as n
        from ${sql.table(TOOL_TABLES.platformWaitSightings)} where flag = 'user_disabled'`.execute(
        h.db,
      );
      await h.close();
      assert.equal(seen.rows[0]?.n, awaited.length, "the plan recorded a sighting of each");
      await delay(Math.max(0, (WAIT_S - Number(seen.rows[0]?.age ?? 0)) * 1000) + 200);

      // The platform's migration serves some identities right after the run's listing is answered.
      const migrated = awaited.slice(0, MIGRATED);
      proxy.rewrite = (r, body) => {
        if (r.method === "GET" && r.url.startsWith(IDENTITY_PATHS.identities) && proxy.rewrite) {
          for (const id of migrated) {
            if (clientSellOnly(sandbox, id).length === 0) {
              sandbox.addControl(id, { type: "SELL_ONLY", set_by: "CLIENT", is_overridable: true });
            }
          }
        }
        return body;
      };
      const apply = await runCli(
        ["apply", "--yes", "--wait-for-platform-s", String(WAIT_S), ...outArgs(), ...target.args],
        env,
      );
      proxy.rewrite = null;
      assert.equal(apply.code, 0, apply.stderr);
      const summary = JSON.parse(apply.stdout) as RunSummary;
      assert.equal(
        summary.outcomes["succeeded:adopted"],
        MIGRATED,
        JSON.stringify(summary.outcomes),
      );
      for (const id of awaited) assert.equal(clientSellOnly(sandbox, id).length, 1, id);
      assert.equal(sandbox.stats().integrity.identitiesWithDuplicateClientSellOnly, 0);
    });
  });
}
