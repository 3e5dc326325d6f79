import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Sandbox, SCOPES, startSandbox } from "../../src/index.ts";
import {
  adminOk,
  DEPOSIT_ADDRESSES,
  get,
  INTERNAL_TRANSFER,
  orderPath,
  quoteExecutionsPath,
  rulePath,
  send,
} from "../helpers/sandbox-api.ts";
import {
  type Answer,
  assertProblem,
  CONTROLS,
  call,
  IDENTITIES,
  requestToken,
  tokenFor,
} from "../helpers/sandbox-http.ts";

const NEW_SCOPES = [
  SCOPES.readQuoteExecution,
  SCOPES.readOrder,
  SCOPES.writeInternalTransfer,
  SCOPES.readDepositAddress,
  SCOPES.writeOrchestrationRule,
];

describe("sandbox bearer tokens and scopes on every endpoint: identities, controls, quote executions, orders, transfers, addresses and rules", () => {
  let sandbox: Sandbox;
  let orderId: string;
  let ruleId: string;
  /** Each endpoint with its scope and a request that succeeds with it (a fresh transfer each time). */
  let endpoints: { scope: string; name: string; call: (token?: string) => Promise<Answer> }[];

  before(async () => {
    sandbox = await startSandbox({ identities: 50, rateLimitRps: 0, tokenRateLimitRps: 0 });
    const identityIds: string[] = (
      await call(sandbox, await tokenFor(sandbox), "GET", IDENTITIES)
    ).body.items.map((i: { id: string }) => i.id);
    const identityId = identityIds[0]!;
    // Each successful create takes a fresh identity, each successful delete a fresh control.
    let nextCreate = 1;
    const deletable = identityIds
      .slice(25)
      .map((id) => sandbox.addControl(id, { type: "DORMANT" }).id);
    await adminOk(sandbox, "POST", "/balances", {
      items: [
        { profile_id: "p1", asset: "BTC", amount: "100" },
        { profile_id: "p2", asset: "BTC", amount: "0" },
      ],
    });
    await adminOk(sandbox, "POST", "/quote-executions", { profile_id: "p1", count: 3 });
    const orders = await adminOk(sandbox, "POST", "/orders", {
      items: [
        { profile_id: "p1", side: "SELL", market: "BTCUSD", type: "MARKET", base_amount: "1" },
      ],
    });
    orderId = orders.items[0].order.id;
    await adminOk(sandbox, "POST", "/deposit-addresses", { count: 3 });
    const rules = await adminOk(sandbox, "POST", "/orchestration-rules", {
      items: [1, 2, 3].map((i) => ({
        ref_id: `rule-${i}`,
        profile_id: "p1",
        source_asset: "USDC",
        destination_asset: "USD",
        source: { crypto: { network: "ETHEREUM" } },
        destination: { profile: { profile_id: "p1" } },
      })),
    });
    const ruleIds: string[] = rules.items.map((r: { id: string }) => r.id);
    ruleId = ruleIds[0]!;
    let nextRule = 1;
    endpoints = [
      {
        scope: SCOPES.readIdentity,
        name: "GET identities",
        call: (t) => call(sandbox, t, "GET", IDENTITIES),
      },
      {
        scope: SCOPES.readIdentity,
        name: "GET identity",
        call: (t) => call(sandbox, t, "GET", `${IDENTITIES}/${identityId}`),
      },
      {
        scope: SCOPES.readControl,
        name: "GET identity controls",
        call: (t) => call(sandbox, t, "GET", CONTROLS, { query: { identity_id: identityId } }),
      },
      {
        scope: SCOPES.writeControl,
        name: "POST identity control",
        call: async (t) => {
          const res = await call(sandbox, t, "POST", CONTROLS, {
            body: { identity_id: identityIds[nextCreate], type: "SELL_ONLY", reason_code: "OTHER" },
          });
          if (res.status === 200) nextCreate++;
          return res;
        },
      },
      {
        scope: SCOPES.writeControl,
        name: "DELETE identity control",
        call: async (t) => {
          const res = await call(sandbox, t, "DELETE", CONTROLS, {
            query: { control_id: deletable[0]! },
          });
          if (res.status === 200) deletable.shift();
          return res;
        },
      },
      {
        scope: SCOPES.readQuoteExecution,
        name: "GET quote-executions",
        call: (t) => get(sandbox, t, quoteExecutionsPath("p1")),
      },
      {
        scope: SCOPES.readOrder,
        name: "GET order",
        call: (t) => get(sandbox, t, orderPath("p1", orderId)),
      },
      {
        scope: SCOPES.writeInternalTransfer,
        name: "POST transfer/internal",
        call: (t) =>
          send(sandbox, t, "POST", INTERNAL_TRANSFER, {
            from_profile_id: "p1",
            to_profile_id: "p2",
            amount: "1",
            asset: "BTC",
          }),
      },
      {
        scope: SCOPES.readDepositAddress,
        name: "GET deposit-addresses",
        call: (t) => get(sandbox, t, DEPOSIT_ADDRESSES),
      },
      {
        scope: SCOPES.writeOrchestrationRule,
        name: "DELETE orchestration rule",
        // Each successful call consumes a rule; refusals never reach it.
        call: async (t) => {
          const res = await send(sandbox, t, "DELETE", rulePath(ruleIds[nextRule] ?? ruleId));
          if (res.status === 200) nextRule++;
          return res;
        },
      },
    ];
  });
  after(() => sandbox.close());

  it("grants the read-write client every scope of the interface by default", async () => {
    const res = await requestToken(sandbox);
    assert.equal(res.status, 200);
    const scopes: string[] = res.body.scope.split(" ");
    for (const s of NEW_SCOPES) assert.ok(scopes.includes(s), `missing ${s}`);
    assert.deepEqual([...scopes].sort(), Object.values(SCOPES).sort());
  });

  it("serves each endpoint to a token holding only that endpoint's scope", async () => {
    for (const e of endpoints) {
      const token = await tokenFor(sandbox, { scope: e.scope });
      const res = await e.call(token);
      assert.equal(res.status, 200, `${e.name}: ${res.text}`);
    }
  });

  it("refuses each endpoint with 403 naming its scope when the token holds every other scope", async () => {
    const balanceBefore = sandbox.balancesOf("p1");
    const activeBefore = sandbox.orchestrationRules().filter((r) => r.status === "ACTIVE").length;
    for (const e of endpoints) {
      const others = Object.values(SCOPES).filter((s) => s !== e.scope);
      const token = await tokenFor(sandbox, { scope: others.join(" ") });
      const res = await e.call(token);
      assertProblem(res, 403, new RegExp(`lacks the scope ${e.scope}`));
      assert.match(res.headers.get("www-authenticate") ?? "", /insufficient_scope/);
    }
    assert.deepEqual(sandbox.balancesOf("p1"), balanceBefore, "no refused transfer moved funds");
    assert.equal(
      sandbox.orchestrationRules().filter((r) => r.status === "ACTIVE").length,
      activeBefore,
      "no refused deletion deleted a rule",
    );
  });

  it("serves the read-only client every read and refuses it every write with 403: control create and delete, transfer, rule deletion", async () => {
    const token = await tokenFor(sandbox, { readOnly: true });
    const writesBefore = sandbox.stats().writes;
    const writes = endpoints.filter((e) => !e.scope.includes(":read_"));
    assert.ok(writes.length >= 4, `write endpoints: ${writes.map((e) => e.name)}`);
    for (const e of endpoints) {
      const res = await e.call(token);
      if (e.scope.includes(":read_")) assert.equal(res.status, 200, `${e.name}: ${res.text}`);
      else assertProblem(res, 403, new RegExp(e.scope));
    }
    assert.deepEqual(sandbox.stats().writes, writesBefore, "no refused write wrote a control");
  });

  it("answers 401 problems on every new endpoint without a token or with an unknown one", async () => {
    const good = await tokenFor(sandbox);
    for (const e of endpoints) {
      assertProblem(await e.call(undefined), 401, /no authorization header/);
      const unknown = await e.call(`${good}x`);
      assertProblem(unknown, 401, /unknown/);
      assert.ok(!unknown.text.includes(good), "the token is never echoed");
    }
  });
});
