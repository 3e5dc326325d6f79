/**
 * Issue 51, acceptance: `--wait-for-platform-s` while the platform migrates at 10 identities a
 * second and does not look again for a control made since it found the identity in need
 * (`migrateAtRate(10)`, `duplicatePolicy` allow: the platform README's "assume it may not, and
 * never race it"). A plan records the sightings, the wait expires, the platform's migration
 * starts, then a reconcile sends its
 * creates at the platform's own pace (`--rate 10`), so the tool's creates and the platform's
 * migration meet at the same identities. No identity may end with a CLIENT SELL_ONLY the tool
 * made after the platform's own: the CLI against the sandbox over HTTP, on every backend.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import type { ControlRecord, Sandbox } from "controls-sandbox";
import { sql } from "kysely";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { TOOL_TABLES } from "../../src/db/schema.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
import { runCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends } from "../helpers/db.ts";
import { clientSellOnly } from "../helpers/platform-assertions.ts";

const N = 1500;
const SEED = 5177;
const WAIT_S = 1;
const MIGRATED_REASON = "migrated from user_disabled";
const awaited = [...syntheticIdentities(N, SEED)].filter((r) => r.user_disabled).map((r) => r.id);
const isPlatforms = (c: ControlRecord) => c.reason === MIGRATED_REASON;

const isClientSellOnly = (c: ControlRecord) =>
  c.type === "SELL_ONLY" && (c.set_by === "CLIENT" || c.set_by === "SET_BY_CLIENT");

/** Whether the tool made a CLIENT SELL_ONLY after the platform's own (controls in order). */
function toolAfterPlatform(held: readonly ControlRecord[]): boolean {
  const firstPlatform = held.findIndex(isPlatforms);
  return firstPlatform !== -1 && held.findLastIndex((c) => !isPlatforms(c)) > firstPlatform;
}

/**
 * Identities holding two or more active CLIENT SELL_ONLY, by who made the first; and those where
 * the tool's create came after the platform's but the tool deleted its own again (withdrawn).
 */
function duplicates(sandbox: Sandbox) {
  const held = { toolAfterPlatform: [] as string[], platformAfterTool: [] as string[] };
  const withdrawn: string[] = [];
  for (const id of awaited) {
    const active = clientSellOnly(sandbox, id);
    if (active.length >= 2) {
      (toolAfterPlatform(active) ? held.toolAfterPlatform : held.platformAfterTool).push(id);
    } else {
      const ever = sandbox.controlsOf(id, { includeDeleted: true }).filter(isClientSellOnly);
      if (toolAfterPlatform(ever)) withdrawn.push(id);
    }
  }
  return { ...held, withdrawn };
}

for (const backend of backends) {
  describe(`--wait-for-platform-s against a platform migrating at 10/s, on ${backend.name}`, () => {
    let rig: CliRig;
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
      rig = await startCliRig(backend, {
        identities: N,
        seed: SEED,
        // The migration starts just before the reconcile (below), whatever the machine's load:
        // begun with the sandbox, a slow plan could let it finish first and leave nothing to race.
        sandbox: { duplicatePolicy: "allow" },
      });
      out = await mkdtemp(join(tmpdir(), "cm-wait-race-"));
    });
    after(async () => {
      await rig?.close();
      await rm(out, { recursive: true, force: true });
    });

    it("leaves no identity with a CLIENT SELL_ONLY the tool created after the platform's migration created its own", async (t) => {
      const { sandbox, target } = rig;
      const env = { ...rig.env, CONTROLS_WAIT_FOR_PLATFORM: "true" };
      const plan = await runCli(["plan", ...outArgs(), ...target.args], env);
      assert.ok(plan.code === 0 || plan.code === 2, plan.stderr);
      const h = await target.open();
      const seen = await sql<{ age: number; n: number }>`
        select extract(epoch from now() - max(first_seen_at))::float8 as age, count(*)::int as n
        from ${sql.table(TOOL_TABLES.platformWaitSightings)} where flag = 'user_disabled'`.execute(
        h.db,
      );
      await h.close();
      assert.ok(Number(seen.rows[0]?.n) > 0, "the plan recorded sightings");
      await delay(Math.max(0, (WAIT_S - Number(seen.rows[0]?.age ?? 0)) * 1000) + 200);
      sandbox.migrateAtRate(10);
      const left = sandbox.stats().autoMigrate.left;
      assert.ok(left > 0, "the platform's migration still has work as the reconcile starts");

      const reconciled = await runCli(
        [
          "reconcile",
          "--yes",
          "--wait-for-platform-s",
          String(WAIT_S),
          "--rate",
          "10",
          ...outArgs(),
          ...target.args,
        ],
        env,
      );
      assert.ok(reconciled.code === 0 || reconciled.code === 2, reconciled.stderr);
      const summary = JSON.parse(reconciled.stdout) as RunSummary;
      const d = duplicates(sandbox);
      t.diagnostic(
        `awaited ${awaited.length}; platform's migration left at the reconcile ${left}; outcomes ${JSON.stringify(summary.outcomes)}; identities with two CLIENT SELL_ONLY, the tool's after the platform's ${d.toolAfterPlatform.length}, the platform's after the tool's (so far) ${d.platformAfterTool.length}; the tool's made after the platform's and deleted again ${d.withdrawn.length}`,
      );
      assert.deepEqual(d.toolAfterPlatform, []);
    });
  });
}
