/**
 * Issue 51 §5: a create whose wait for the platform expired is checked again after its answer.
 * The platform's migration makes its CLIENT SELL_ONLY while the tool's create is on its way (the
 * create held by a proxy until then): the tool deletes its own at once and adopts the platform's.
 * When that second read fails, the action stays created with a warning, and `reconcile --prune`
 * deletes the tool's own of the duplicate, down to the platform's.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { sql } from "kysely";
import { IDENTITY_PATHS, syntheticIdentities } from "../../src/contract/index.ts";
import { TOOL_TABLES } from "../../src/db/schema.ts";
import { runCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends } from "../helpers/db.ts";
import { startProxy, type TestProxy } from "../helpers/http-proxy.ts";
import { clientSellOnly } from "../helpers/platform-assertions.ts";
import { waitFor } from "../helpers/wait-for.ts";

const N = 200;
const SEED = 5179;
const WAIT_S = 1;
const MIGRATED = "migrated from user_disabled";
const awaited = [...syntheticIdentities(N, SEED)].filter((r) => r.user_disabled).map((r) => r.id);
/** W: withdrawn; F: its second read fails. */
const [W, F] = awaited as [string, string];
const postedFor = (body: string) =>
  (JSON.parse(body || "{}") as { identity_id?: string }).identity_id;

for (const backend of backends) {
  describe(`the second read after an awaited create, on ${backend.name}`, () => {
    let rig: CliRig;
    let proxy: TestProxy;
    let out: string;
    let n = 0;
    const outArgs = () => ["--no-progress", "--state", "bulk", "--out", join(out, String(++n))];

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED });
      proxy = await startProxy(rig.sandbox.apiUrl);
      out = await mkdtemp(join(tmpdir(), "cm-wait-withdraw-"));
    });
    after(async () => {
      await proxy?.close();
      await rig?.close();
      await rm(out, { recursive: true, force: true });
    });

    it("deletes its own control when the platform's migration made one while the create was on its way; a failed second read leaves the duplicate to reconcile --prune, which keeps the platform's", async () => {
      const { sandbox, target } = rig;
      const env = { ...rig.env, API_BASE_URL: proxy.url, CONTROLS_WAIT_FOR_PLATFORM: "true" };
      const plan = await runCli(["plan", ...outArgs(), ...target.args], env);
      assert.ok(plan.code === 0 || plan.code === 2, plan.stderr);
      const h = await target.open();
      const seen = await sql<{ age: number }>`
        select extract(epoch from now() - max(first_seen_at))::float8 as age
        from ${sql.table(TOOL_TABLES.platformWaitSightings)}`.execute(h.db);
      await h.close();
      await delay(Math.max(0, (WAIT_S - Number(seen.rows[0]?.age ?? 0)) * 1000) + 200);

      const isCreate = (r: { method: string; url: string }) =>
        r.method === "POST" && r.url.startsWith(IDENTITY_PATHS.controls);
      proxy.holdWhen = (r) => isCreate(r) && [W, F].includes(postedFor(r.body) ?? "");
      // F's controls read after its create is answered fails (the read before it passes).
      proxy.answerWhen = (r) =>
        r.method === "GET" &&
        r.url.startsWith(`${IDENTITY_PATHS.controls}?`) &&
        r.url.includes(F) &&
        proxy.requests.some((p) => isCreate(p) && postedFor(p.body) === F && p.status > 0)
          ? {
              status: 404,
              body: JSON.stringify({ type: "about:blank", title: "Not Found", status: 404 }),
            }
          : null;
      const applying = runCli(
        ["apply", "--yes", "--wait-for-platform-s", String(WAIT_S), ...outArgs(), ...target.args],
        env,
      );
      await waitFor("the creates of W and F held on their way", () => proxy.held.length === 2);
      const platforms = [W, F].map(
        (id) =>
          sandbox.addControl(id, {
            type: "SELL_ONLY",
            set_by: "SET_BY_CLIENT",
            is_overridable: true,
            reason: MIGRATED,
          }).id,
      );
      proxy.release();
      const apply = await applying;
      proxy.holdWhen = () => false;
      proxy.answerWhen = () => null;
      assert.equal(apply.code, 0, apply.stderr);

      assert.deepEqual(
        clientSellOnly(sandbox, W).map((c) => c.id),
        [platforms[0]],
        "W: the platform's kept, the tool's own deleted",
      );
      const h2 = await target.open();
      const actions = await sql<{
        identity_id: string;
        outcome: string;
        result_control_id: string;
      }>`
        select identity_id, outcome, result_control_id from ${sql.table(TOOL_TABLES.actions)}
        where identity_id in (${W}, ${F}) and action = 'create'`.execute(h2.db);
      await h2.close();
      const byId = new Map(actions.rows.map((a) => [a.identity_id, a]));
      assert.equal(byId.get(W)?.outcome, "adopted");
      assert.equal(byId.get(W)?.result_control_id, platforms[0]);
      assert.equal(byId.get(F)?.outcome, "created", "F: its second read failed, counted created");
      assert.equal(clientSellOnly(sandbox, F).length, 2, "F: the duplicate is left");
      assert.match(apply.stderr, /a duplicate, if any, is left to reconcile --prune/);
      for (const id of awaited.slice(2)) assert.equal(clientSellOnly(sandbox, id).length, 1, id);

      const pruned = await runCli(
        ["reconcile", "--yes", "--prune", ...outArgs(), ...target.args],
        env,
      );
      assert.ok(pruned.code === 0 || pruned.code === 2, pruned.stderr);
      assert.deepEqual(
        clientSellOnly(sandbox, F).map((c) => c.id),
        [platforms[1]],
        "F: reconcile --prune deleted the tool's own, the platform's stays",
      );
    });
  });
}
