import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Sandbox, startSandbox } from "../../src/index.ts";
import {
  type Answer,
  assertProblem,
  CONTROLS,
  call,
  IDENTITIES,
  read,
  tokenFor,
} from "../helpers/sandbox-http.ts";

describe("sandbox admin surface", () => {
  let sandbox: Sandbox;
  const admin = async (method: string, path: string, body?: unknown): Promise<Answer> => {
    const init: RequestInit = { method };
    if (body !== undefined) {
      init.headers = { "content-type": "application/json" };
      init.body = JSON.stringify(body);
    }
    return read(await fetch(`${sandbox.adminUrl}${path}`, init));
  };

  before(async () => {
    // A tight limit on the API shows that the admin surface is never limited.
    sandbox = await startSandbox({
      rateLimitRps: 1,
      rateWindowS: 1,
      penaltyS: 1,
      tokenRateLimitRps: 0,
    });
  });
  after(() => sandbox.close());

  it("lives outside /v2, needs no token and is never rate limited", async () => {
    assert.ok(!sandbox.adminUrl.includes("/v2"));
    for (let i = 0; i < 30; i++) assert.equal((await admin("GET", "/stats")).status, 200);
  });

  it("seeds given identities and reports the counts; a bad row is a 400 naming it", async () => {
    const res = await admin("POST", "/seed", {
      identities: [
        { id: "a", user_disabled: true, admin_disabled: false, created_at: "2022-01-01T00:00:00Z" },
        { id: "b", user_disabled: false, admin_disabled: true, created_at: "2022-01-02T00:00:00Z" },
        { id: "c", user_disabled: false, admin_disabled: false },
      ],
      migrated_fraction: 1,
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.identities, 3);
    assert.equal(res.body.migrated, 2);
    assert.deepEqual(res.body.migrationControls, { client: 1, service: 1 });
    assertProblem(
      await admin("POST", "/seed", {
        identities: [{ id: "d", user_disabled: 1, admin_disabled: false }],
      }),
      400,
      /identities\[0\]\.user_disabled must be a boolean/,
    );
    assertProblem(
      await admin("POST", "/seed", { migrated_fraction: 2, count: 1 }),
      400,
      /migratedFraction/,
    );
    assertProblem(await admin("POST", "/seed", {}), 400, /identities .* or count/);
  });

  it("crafts any control state and shows the ground truth, deleted ones on request", async () => {
    const frozen = await admin("POST", "/identities/c/controls", {
      type: "FROZEN",
      set_by: "SERVICE",
      reason_code: "COMPLIANCE_SCREENING",
    });
    assert.equal(frozen.status, 200);
    assert.equal(frozen.body.is_overridable, false);
    const weird = await admin("POST", "/identities/c/controls", {
      type: "SELL_ONLY",
      set_by: "WEIRD",
      is_overridable: true,
      deleted: true,
    });
    assert.ok(weird.body.deleted_at);
    const active = await admin("GET", "/identities/c/controls");
    assert.deepEqual(active.body.items, [frozen.body]);
    const all = await admin("GET", "/identities/c/controls?include_deleted=true");
    assert.deepEqual(all.body.items, [frozen.body, weird.body]);
    assertProblem(await admin("GET", "/identities/zzz/controls"), 404, /zzz not found/);
    assertProblem(
      await admin("POST", "/identities/c/controls", { set_by: "SERVICE" }),
      400,
      /type is required/,
    );
    assertProblem(
      await admin("POST", "/identities/c/controls", { type: "CLOSED", is_overridable: "yes" }),
      400,
      /is_overridable must be a boolean/,
    );
  });

  it("sets faults and limits at runtime, in snake_case or camelCase, and refuses unknown or bad settings", async () => {
    assert.equal(
      (await admin("PUT", "/limits", { rate_limit_rps: 0, duplicate_policy: "reject" })).status,
      200,
    );
    const token = await tokenFor(sandbox);
    assert.equal((await admin("PUT", "/faults", { fail_rate: 1 })).status, 200);
    const failed = await call(sandbox, token, "GET", IDENTITIES);
    assert.ok(failed.status >= 500);
    assert.equal((await admin("PUT", "/faults", { failRate: 0 })).status, 200);
    assert.equal((await call(sandbox, token, "GET", IDENTITIES)).status, 200);
    const body = { identity_id: "a", type: "SELL_ONLY", reason_code: "OTHER" };
    assertProblem(await call(sandbox, token, "POST", CONTROLS, { body }), 409);
    assertProblem(
      await admin("PUT", "/faults", { fail_rate: 2 }),
      400,
      /failRate must be between 0 and 1, got 2/,
    );
    assertProblem(
      await admin("PUT", "/faults", { failrate: 0.1 }),
      400,
      /unknown setting "failrate"/,
    );
    assertProblem(
      await admin("PUT", "/limits", { duplicate_policy: "maybe" }),
      400,
      /duplicatePolicy/,
    );
    assertProblem(await admin("PUT", "/limits", { rate_window_s: 0 }), 400, /rateWindowS/);
    await admin("PUT", "/limits", { duplicate_policy: "allow" });
  });

  it("revokes every token", async () => {
    const token = await tokenFor(sandbox);
    assert.equal((await admin("POST", "/revoke-tokens")).status, 200);
    assertProblem(await call(sandbox, token, "GET", IDENTITIES), 401, /revoked/);
  });

  it("reports stats and request counts per time window", async () => {
    const from = Date.now();
    const token = await tokenFor(sandbox);
    await call(sandbox, token, "GET", `${IDENTITIES}/a`);
    await call(sandbox, token, "GET", `${IDENTITIES}/a`);
    const stats = (await admin("GET", "/stats")).body;
    assert.equal(stats.requests["GET /v2/identity/identities/:id"]["200"], 2);
    assert.ok(stats.tokensIssued >= 1);
    assert.equal(typeof stats.memory.rssBytes, "number");
    assert.deepEqual(Object.keys(stats.integrity).sort(), [
      "activeClientSellOnly",
      "activeServiceSellOnly",
      "duplicateClientSellOnlyControls",
      "identitiesWithDuplicateClientSellOnly",
    ]);
    const window = await admin(
      "GET",
      `/requests?from=${from}&endpoint=${encodeURIComponent("/v2/identity/identities/:id")}`,
    );
    assert.deepEqual(window.body, { served: 2, rateLimited: 0, refusedByPenalty: 0 });
  });

  it("resets identities, controls, stats and tokens", async () => {
    const token = await tokenFor(sandbox);
    assert.equal((await admin("POST", "/reset")).status, 200);
    const stats = (await admin("GET", "/stats")).body;
    assert.equal(stats.identities, 0);
    assert.deepEqual(stats.controls, { total: 0, active: 0 });
    assert.equal(stats.tokensIssued, 0);
    assertProblem(await call(sandbox, token, "GET", IDENTITIES), 401);
    assertProblem(await admin("GET", "/nothing"), 404, /no route GET \/__sandbox\/nothing/);
  });
});
