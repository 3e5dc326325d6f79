/**
 * Re-verification reads by id the platform's legacy fields of pending creates that its strategy
 * does not otherwise learn (issue 27): per-identity reads each identity with a pending create by
 * id (its controls and legacy fields in one answer), filtered reads by id those its SELL_ONLY
 * listing does not show. A create whose identity's legacy `user_disabled` turned true since it
 * was planned ends `skipped:awaiting_platform_migration`, and no create is sent for it.
 *
 * Re-verification picks its strategy with the cost model (`state-strategy.ts`), not the run's
 * `--state`; the data here is shaped so that it picks the one under test, and the test checks it
 * did (its log line and the requests the sandbox served):
 * - per-identity: `plan --state per-identity`, then `apply --plan` with two creates, fewer than
 *   the listing's pages of 3,500 identities;
 * - filtered: `plan --state filtered` (so a SELL_ONLY count is known), then `reconcile --prune
 *   --state filtered` stopped by a platform refusing the controls path, then resumed: its six
 *   pending deletes make one by-id read per pending create cheaper than reading every identity's
 *   controls, and the SELL_ONLY listing is one page.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { sql } from "kysely";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { TOOL_TABLES } from "../../src/db/schema.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
import { runCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { clientSellOnly } from "../helpers/platform-assertions.ts";

/** Four listing pages: more than either strategy's re-read costs here. */
const N = 3500;
const SEED = 2771;
const ROWS = [...syntheticIdentities(N, SEED)];
const userFlagged = ROWS.filter((r) => r.user_disabled).map((r) => r.id);
const clean = ROWS.filter((r) => !r.user_disabled && !r.admin_disabled).map((r) => r.id);
/** Creates of the per-identity case, and of the filtered case; deletes of the filtered case. */
const PER_IDENTITY = userFlagged.slice(0, 2);
const FILTERED = userFlagged.slice(2, 4);
const PRUNED = clean.slice(0, 6);
const FAST = ["--rate", "1000", "--allow-rate-above-limit", "--no-progress"];

/** Requests the sandbox served on a route (`GET /v2/identity/identities/:id`), every status. */
function served(sandbox: Sandbox, matches: (route: string) => boolean): number {
  let n = 0;
  for (const [route, byStatus] of Object.entries(sandbox.stats().requests)) {
    if (!matches(route)) continue;
    for (const count of Object.values(byStatus)) n += Number(count);
  }
  return n;
}
const byIdReads = (route: string) => route.startsWith("GET /v2/identity/identities/");
const listings = (route: string) => route === "GET /v2/identity/identities";
const controlReads = (route: string) => route === "GET /v2/identity/controls";

for (const backend of backends) {
  describe(`re-verification reads pending creates' legacy fields by id on ${backend.name}`, {
    timeout: 300_000,
  }, () => {
    let rig: CliRig;
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;
    const out = mkdtempSync(join(tmpdir(), "cm-e2e-reverify-by-id-"));
    const cli = (args: string[]) => runCli([...args, ...FAST, ...target.args], env);

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED });
      ({ sandbox, target } = rig);
      // Waiting for the platform, the default: only then are the legacy fields re-read.
      env = { ...rig.env, CONTROLS_WAIT_FOR_PLATFORM: "true" };
    });
    after(async () => {
      await rig.close();
      rmSync(out, { recursive: true, force: true });
    });

    /**
     * For each `[statuses, action]` asked, the identities of the run's creates (or other actions)
     * in those statuses, from its journal: `pending` (never sent), or also those in doubt
     * (`in_flight`, `ambiguous`: a request the stop cut short, verified by the resume). One open
     * of the database for all of them: each open of PGlite costs this process about 0.5 s of CPU.
     */
    async function actionsIn(
      runId: string,
      ...asked: [statuses: string[], action?: string][]
    ): Promise<string[][]> {
      const h = await target.open();
      try {
        const found: string[][] = [];
        for (const [statuses, action = "create"] of asked) {
          const r = await sql<{ identity_id: string }>`
            select identity_id from ${sql.table(TOOL_TABLES.actions)}
            where run_id = ${runId} and action = ${action} and status = any(${statuses}::text[])
            order by identity_id`.execute(h.db);
          found.push(r.rows.map((x) => x.identity_id));
        }
        return found;
      } finally {
        await h.close();
      }
    }
    const IN_DOUBT_OR_PENDING = ["pending", "in_flight", "ambiguous"];

    it("a plan read with --state per-identity, then apply --plan after one planned identity's platform user_disabled turned true: re-read by id, that create ends skipped:awaiting_platform_migration and is never sent", async () => {
      // Every flagged identity awaits the platform's migration (its legacy fields are the seed's)
      // but the creates under test, whose platform user_disabled is false when planned.
      for (const id of PER_IDENTITY) sandbox.setLegacyFields(id, { user_disabled: false });
      const plan = await cli([
        "plan",
        "--state",
        "per-identity",
        "--json",
        "--out",
        join(out, "plan-per-identity"),
      ]);
      assert.equal(plan.code, 2, plan.stderr);
      const planned = JSON.parse(plan.stdout) as RunSummary;
      assert.equal(planned.findings.missing_client_control, PER_IDENTITY.length);
      const [turned, still] = PER_IDENTITY as [string, string];
      sandbox.setLegacyFields(turned, { user_disabled: true });
      const creates = sandbox.stats().writes.creates;
      const reads = {
        byId: served(sandbox, byIdReads),
        listing: served(sandbox, listings),
        controls: served(sandbox, controlReads),
      };

      const apply = await cli([
        "apply",
        "--plan",
        planned.run_id,
        "--yes",
        "--json",
        "--out",
        join(out, "apply-per-identity"),
      ]);
      assert.equal(apply.code, 0, apply.stderr);
      assert.match(
        apply.stderr,
        /Re-reading 2 pending actions of 2 identities decided on an earlier read, with the per-identity strategy/,
      );
      const summary = JSON.parse(apply.stdout) as RunSummary;
      assert.equal(summary.outcomes["skipped:awaiting_platform_migration"], 1);
      assert.equal(clientSellOnly(sandbox, turned).length, 0, "no create for the awaiting one");
      assert.equal(clientSellOnly(sandbox, still).length, 1);
      assert.equal(sandbox.stats().writes.creates - creates, 1);
      // Each identity with a pending create read once by id; no listing, no controls read.
      assert.equal(served(sandbox, byIdReads) - reads.byId, 2);
      assert.equal(served(sandbox, listings) - reads.listing, 0);
      assert.equal(served(sandbox, controlReads) - reads.controls, 0);
    });

    it("a run read with --state filtered, stopped before its writes and resumed after a pending create's platform user_disabled turned true: the create its SELL_ONLY listing does not show is read by id, ends skipped:awaiting_platform_migration and is never sent", async () => {
      for (const id of FILTERED) sandbox.setLegacyFields(id, { user_disabled: false });
      for (const id of PRUNED) {
        sandbox.addControl(id, { type: "SELL_ONLY", set_by: "CLIENT", is_overridable: true });
      }
      // A filtered plan first: the SELL_ONLY count the re-read's cost model starts from.
      const plan = await cli([
        "plan",
        "--state",
        "filtered",
        "--json",
        "--out",
        join(out, "plan-filtered"),
      ]);
      assert.equal(plan.code, 2, plan.stderr);

      // The controls path answers one request, then 429 with a ten-minute penalty: the run stops.
      sandbox.setLimits({
        rateLimitRps: 50,
        penaltyS: 600,
        endpointRateLimits: {
          "/v2/identity/controls": 0.001,
          "/v2/identity/identities": 0,
          "/v2/identity/identities/{id}": 0,
        },
      });
      // One write at a time: the deletes of the listed identities come first in the journal, so
      // the one request served is a delete's re-check and the run stops before any create is sent.
      const args = [
        ...["--yes", "--json", "--max-wait-s", "1", "--concurrency", "1"],
        ...["--out", join(out, "reconcile")],
      ];
      const stopped = await cli(["reconcile", "--prune", "--state", "filtered", ...args]);
      assert.equal(stopped.code, 1, stopped.stderr);
      const runId = /Run (\S+) \(reconcile\) started/.exec(stopped.stderr)?.[1];
      assert.ok(runId, stopped.stderr);
      sandbox.setLimits({ rateLimitRps: 0, endpointRateLimits: {} });

      const [pending = [], unsent = []] = await actionsIn(
        runId,
        [["pending"]],
        [IN_DOUBT_OR_PENDING],
      );
      assert.ok(pending.length > 0, "creates left to the resume");
      assert.ok(
        pending.every((id) => FILTERED.includes(id)),
        pending.join(", "),
      );
      const turned = pending[0] as string;
      sandbox.setLegacyFields(turned, { user_disabled: true });
      const creates = sandbox.stats().writes.creates;
      const byId = served(sandbox, byIdReads);
      const controls = served(sandbox, controlReads);

      const resumed = await cli(["reconcile", "--resume", runId, ...args]);
      // Exit 3: the delete the platform refused (429 past --max-wait-s) when the run stopped
      // stays failed.
      assert.equal(resumed.code, 3, resumed.stderr);
      assert.match(resumed.stderr, /1 failed \(refused\)/);
      assert.match(
        resumed.stderr,
        /Re-reading \d+ pending actions of \d+ identities decided on an earlier read, with the filtered strategy/,
      );
      const summary = JSON.parse(resumed.stdout) as RunSummary;
      assert.equal(summary.outcomes["skipped:awaiting_platform_migration"], 1);
      assert.equal(clientSellOnly(sandbox, turned).length, 0, "no create for the awaiting one");
      const [failedCreates = [], left, failed = []] = await actionsIn(
        runId,
        [["failed"]],
        [IN_DOUBT_OR_PENDING],
        [["failed"], "delete"],
      );
      // Were a create the write the platform refused, it would stay failed, as the delete does.
      assert.ok(!failedCreates.includes(turned));
      for (const id of FILTERED) {
        if (id === turned || failedCreates.includes(id)) continue;
        assert.equal(clientSellOnly(sandbox, id).length, 1, id);
      }
      assert.equal(sandbox.stats().writes.creates - creates, unsent.length - 1);
      assert.deepEqual(left, [], "nothing left pending or in doubt");
      const pruned = PRUNED.filter((id) => clientSellOnly(sandbox, id).length === 0);
      assert.deepEqual(
        [...pruned, ...failed].sort(),
        [...PRUNED].sort(),
        "every other stale control pruned",
      );
      // The pending creates (no SELL_ONLY, so not listed) read by id; no identity's controls read
      // but right before each delete, as every delete is re-checked.
      assert.ok(served(sandbox, byIdReads) - byId >= pending.length);
      assert.ok(served(sandbox, controlReads) - controls <= PRUNED.length);
    });
  });
}
