import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { type Sandbox, type SandboxOptions, startSandbox } from "../../src/index.ts";
import {
  admin,
  adminOk,
  DEPOSIT_ADDRESSES,
  get,
  INTERNAL_TRANSFER,
  orderPath,
  quoteExecutionsPath,
  send,
} from "../helpers/sandbox-api.ts";
import { type Answer, assertProblem, call, IDENTITIES, tokenFor } from "../helpers/sandbox-http.ts";

const QUOTE_EXECUTIONS = "/v2/profiles/:profile_id/quote-executions";

describe("sandbox per-endpoint rate limits", () => {
  let sandbox: Sandbox | undefined;
  let token: string;
  let orderId: string;

  /** A sandbox with seeded data; windows of 10 s so a burst never straddles two. */
  async function fresh(options: SandboxOptions): Promise<Sandbox> {
    sandbox = await startSandbox({
      rateWindowS: 10,
      penaltyS: 1,
      tokenRateLimitRps: 0,
      ...options,
    });
    token = await tokenFor(sandbox);
    await adminOk(sandbox, "POST", "/balances", {
      items: [
        { profile_id: "p1", asset: "BTC", amount: "1000" },
        { profile_id: "p2", asset: "BTC", amount: "0" },
        { profile_id: "p3", asset: "BTC", amount: "0" },
      ],
    });
    const orders = await adminOk(sandbox, "POST", "/orders", {
      items: [
        { profile_id: "p1", side: "SELL", market: "BTCUSD", type: "MARKET", base_amount: "1" },
      ],
    });
    orderId = orders.items[0].order.id;
    return sandbox;
  }
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  const calls: Record<string, (sb: Sandbox, i: number) => Promise<Answer>> = {
    "/v2/profiles/:profile_id/quote-executions": (sb, i) =>
      get(sb, token, quoteExecutionsPath(`p${(i % 3) + 1}`)),
    "/v2/transfer/internal": (sb) =>
      send(sb, token, "POST", INTERNAL_TRANSFER, {
        from_profile_id: "p1",
        to_profile_id: "p2",
        amount: "0.001",
        asset: "BTC",
      }),
    "/v2/transfer/deposit-addresses": (sb) => get(sb, token, DEPOSIT_ADDRESSES),
    "/v2/profiles/:profile_id/orders/:id": (sb) => get(sb, token, orderPath("p1", orderId)),
  };

  /** Sequential requests until the first 429; returns how many were served before it. */
  async function servedBeforeLimit(sb: Sandbox, endpoint: string, max: number): Promise<number> {
    for (let i = 0; i < max; i++) {
      const res = await calls[endpoint]!(sb, i);
      if (res.status === 429) return i;
      assert.equal(res.status, 200, `${endpoint} request ${i}: ${res.text}`);
    }
    return max;
  }

  it("keeps the platform's proportions: transfers 20/50 and quote executions 10/50 of the ordinary budget", async () => {
    // rateLimitRps 5 over 10 s: 50 ordinary requests, 20 transfers, 10 quote-execution reads.
    const sb = await fresh({ rateLimitRps: 5 });
    assert.equal(await servedBeforeLimit(sb, "/v2/profiles/:profile_id/quote-executions", 60), 10);
    assert.equal(await servedBeforeLimit(sb, "/v2/transfer/internal", 60), 20);
    assert.equal(await servedBeforeLimit(sb, "/v2/transfer/deposit-addresses", 60), 50);
    assert.equal(await servedBeforeLimit(sb, "/v2/profiles/:profile_id/orders/:id", 60), 50);
    assert.deepEqual(
      sb.balancesOf("p2"),
      [{ profile_id: "p2", asset: "BTC", available: "0.02" }],
      "no refused transfer moved funds",
    );
  });

  it("counts every profile id against one quote-executions budget and penalises them together", async () => {
    const sb = await fresh({ rateLimitRps: 1 }); // 0.2 rps over 10 s: two requests
    assert.equal((await get(sb, token, quoteExecutionsPath("p1"))).status, 200);
    assert.equal((await get(sb, token, quoteExecutionsPath("p2"))).status, 200);
    const third = await get(sb, token, quoteExecutionsPath("p3"));
    assertProblem(
      third,
      429,
      /rate limit exceeded for \/v2\/profiles\/:profile_id\/quote-executions: over 0\.2 requests\/s/,
    );
    assert.equal(third.headers.get("retry-after"), "1");
    assertProblem(await get(sb, token, quoteExecutionsPath("p1")), 429, /penalty running/);
    assert.deepEqual(
      sb.stats().penalised.map((p) => p.endpoint),
      [QUOTE_EXECUTIONS],
    );
    assert.equal(sb.stats().served[QUOTE_EXECUTIONS], 2);
    // Other endpoints keep their own budgets during the penalty.
    assert.equal((await get(sb, token, DEPOSIT_ADDRESSES)).status, 200);
    assert.equal((await get(sb, token, orderPath("p1", orderId))).status, 200);
  });

  it("serves any number of requests to every endpoint, the identity endpoints too, when rateLimitRps is 0", async () => {
    const sb = await fresh({ rateLimitRps: 0 });
    for (const endpoint of Object.keys(calls))
      assert.equal(await servedBeforeLimit(sb, endpoint, 60), 60, endpoint);
    sb.seedIdentities([{ id: "solo", user_disabled: false, admin_disabled: false }]);
    const answers = await Promise.all(
      Array.from({ length: 60 }, () => call(sb, token, "GET", `${IDENTITIES}/solo`)),
    );
    assert.deepEqual(
      answers.filter((r) => r.status !== 200).map((r) => r.status),
      [],
    );
    assert.equal(sb.stats().served[`${IDENTITIES}/:id`], 60);
  });

  it("applies an override table written as the platform documents its paths, and turns all off at 0", async () => {
    const sb = await fresh({
      rateLimitRps: 5,
      endpointRateLimits: { "/v2/profiles/*/quote-executions": 0.3 },
    });
    assert.equal(await servedBeforeLimit(sb, QUOTE_EXECUTIONS, 20), 3);
    assertProblem(
      await admin(sb, "PUT", "/limits", { endpoint_rate_limits: { "/v2/transfer/{id}": 1 } }),
      400,
      /unknown endpoint/,
    );
    assertProblem(
      await admin(sb, "PUT", "/limits", { endpoint_rate_limits: { "/v2/transfer/internal": -1 } }),
      400,
      /must be a number >= 0/,
    );
    await adminOk(sb, "PUT", "/limits", { endpoint_rate_limits: { "/v2/transfer/internal": 0.1 } });
    assert.equal(await servedBeforeLimit(sb, "/v2/transfer/internal", 20), 1);
    // The new table replaced the old one: once the penalties are over, quote executions are back
    // to 10/50 of 5 rps.
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal(await servedBeforeLimit(sb, QUOTE_EXECUTIONS, 20), 10);
    await adminOk(sb, "PUT", "/limits", { rate_limit_rps: 0 });
    assert.equal(
      await servedBeforeLimit(sb, "/v2/transfer/internal", 30),
      30,
      "rateLimitRps 0 overrides the table",
    );
  });

  it("refuses an override table naming an unknown endpoint at start", async () => {
    await assert.rejects(
      startSandbox({ endpointRateLimits: { "/v2/nowhere": 1 } }),
      /unknown endpoint "\/v2\/nowhere"/,
    );
  });
});
