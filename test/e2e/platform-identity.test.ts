/**
 * Issue 51 §2: one key for a platform (its API URL and token URL, normalised, with the client id)
 * binds runs, plans and wait sightings. A plan made on platform A is refused by an apply pointed at
 * platform B, exit 1, nothing sent; sightings recorded on A never age B's wait.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import type { Sandbox } from "controls-sandbox";
import { startSandbox } from "controls-sandbox";
import { sql } from "kysely";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { TOOL_TABLES } from "../../src/db/schema.ts";
import { runCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends } from "../helpers/db.ts";

const N = 300;
const SEED = 5152;
const WAIT_S = 5;
const awaited = [...syntheticIdentities(N, SEED)].filter((r) => r.user_disabled).map((r) => r.id);

backends.forEach((backend) => {
  describe(`a platform's key binds plans and sightings on ${backend.name}`, () => {
    let rig: CliRig;
    let b: Sandbox;
    let envB: Record<string, string>;
    let out: string;
    let n = 0;
    const outArgs = () => ["--no-progress", "--out", join(out, String(++n))];

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED });
      b = await startSandbox({ port: 0, rateLimitRps: 0, tokenRateLimitRps: 0 });
      b.seedIdentities(syntheticIdentities(N, SEED), { migratedFraction: 0, seed: SEED });
      envB = {
        API_BASE_URL: b.apiUrl,
        OAUTH_TOKEN_URL: b.tokenUrl,
        OAUTH_CLIENT_ID: b.credentials.clientId,
        OAUTH_CLIENT_SECRET: b.credentials.clientSecret,
      };
      out = mkdtempSync(join(tmpdir(), "platform-key-"));
    });
    after(async () => {
      await rig.close();
      await b.close();
      rmSync(out, { recursive: true, force: true });
    });

    it("refuses apply --plan of a plan made on another platform: exit 1, nothing sent to either", async () => {
      const { sandbox, target, env } = rig;
      const plan = await runCli(
        ["plan", "--no-wait-for-platform", ...outArgs(), ...target.args],
        env,
      );
      assert.ok(plan.code === 0 || plan.code === 2, plan.stderr);
      const planId = /Run (\S+) \(plan\) started/.exec(plan.stderr)?.[1];
      assert.ok(planId, plan.stderr);
      const refused = await runCli(
        [
          "apply",
          "--plan",
          planId,
          "--yes",
          "--no-wait-for-platform",
          ...outArgs(),
          ...target.args,
        ],
        envB,
      );
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(refused.stderr, new RegExp(`--plan ${planId}: the plan was made against`));
      assert.ok(refused.stderr.includes(`the plan's ${sandbox.apiUrl}`), refused.stderr);
      assert.ok(refused.stderr.includes(`this invocation's ${b.apiUrl}`), refused.stderr);
      assert.match(refused.stderr, /Nothing was sent/);
      assert.doesNotMatch(refused.stderr, new RegExp(b.credentials.clientSecret));
      assert.equal(b.stats().writes.creates, 0, "nothing was sent to the other platform");
      assert.equal(sandbox.stats().writes.creates, 0, "nor to the plan's");
    });

    it("does not age a first run on platform B with the sightings of platform A: 0 creates for identities B has not sighted long enough", async () => {
      const { sandbox, target, env } = rig;
      const wait = (s: number) => ["--state", "bulk", "--wait-for-platform-s", String(s), "--yes"];
      const waiting = { CONTROLS_WAIT_FOR_PLATFORM: "true" };
      const onA = await runCli(["apply", ...wait(100_000), ...outArgs(), ...target.args], {
        ...env,
        ...waiting,
      });
      assert.equal(onA.code, 0, onA.stderr);
      const awaitedHeld = (p: Sandbox) =>
        awaited.filter((id) =>
          p.controlsOf(id).some((c) => c.type === "SELL_ONLY" && /CLIENT/.test(c.set_by)),
        );
      assert.deepEqual(awaitedHeld(sandbox), [], `A: nothing created on a first sighting`);
      // A's sightings older than B's wait, on the database's clock.
      const h = await target.open();
      const seen = await sql<{ age: number; n: number }>`
        select extract(epoch from now() - max(first_seen_at))::float8 as age, count(*)::int as n
        from ${sql.table(TOOL_TABLES.platformWaitSightings)} where flag = 'user_disabled'`.execute(
        h.db,
      );
      await h.close();
      assert.equal(seen.rows[0]?.n, awaited.length);
      await delay(Math.max(0, (WAIT_S - Number(seen.rows[0]?.age ?? 0)) * 1000) + 200);

      const onB = await runCli(["apply", ...wait(WAIT_S), ...outArgs(), ...target.args], {
        ...envB,
        ...waiting,
      });
      assert.equal(onB.code, 0, onB.stderr);
      assert.ok(awaited.length > 10);
      assert.deepEqual(awaitedHeld(b), [], "B: its own first sighting, nothing created");
      const h2 = await target.open();
      const perPlatform = await sql<{ n: number }>`
        select count(*)::int as n from ${sql.table(TOOL_TABLES.platformWaitSightings)}
        where flag = 'user_disabled' group by platform_key order by platform_key`.execute(h2.db);
      await h2.close();
      assert.deepEqual(
        perPlatform.rows.map((r) => r.n),
        [awaited.length, awaited.length],
        "each platform keeps its own sightings",
      );
    });
  });
});
