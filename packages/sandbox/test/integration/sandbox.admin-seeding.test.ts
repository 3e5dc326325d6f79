import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { type Sandbox, SeedConflictError, startSandbox } from "../../src/index.ts";
import {
  admin,
  adminOk,
  DEPOSIT_ADDRESSES,
  get,
  INTERNAL_TRANSFER,
  orderPath,
  quoteExecutionsPath,
  rulePath,
  send,
} from "../helpers/sandbox-api.ts";
import { type Answer, assertProblem, tokenFor } from "../helpers/sandbox-http.ts";

const execution = (extra: Record<string, unknown> = {}) => ({
  profile_id: "seed-p",
  market: "BTCUSD",
  side: "BUY",
  price: "65000.5",
  base_amount: "0.01",
  ...extra,
});

describe("sandbox admin seeding of quote executions, orders, balances, addresses and rules; reset, stats and faults", () => {
  let sandbox: Sandbox;
  let token: string;

  /** One of each resource, through the admin surface; returns the ids to reach them. */
  async function seedAll(): Promise<{ orderId: string; ruleId: string }> {
    await adminOk(sandbox, "POST", "/balances", {
      items: [
        { profile_id: "seed-p", asset: "BTC", amount: "2" },
        { profile_id: "seed-q", asset: "BTC", amount: "0" },
      ],
    });
    await adminOk(sandbox, "POST", "/quote-executions", { items: [execution()] });
    const orders = await adminOk(sandbox, "POST", "/orders", {
      items: [
        {
          profile_id: "seed-p",
          side: "BUY",
          market: "BTCUSD",
          type: "LIMIT",
          price: "1",
          base_amount: "1",
        },
      ],
    });
    await adminOk(sandbox, "POST", "/deposit-addresses", {
      items: [{ profile_id: "seed-p", crypto_network: "BITCOIN", ref_id: "addr-1" }],
    });
    const rules = await adminOk(sandbox, "POST", "/orchestration-rules", {
      items: [
        {
          ref_id: "rule-1",
          profile_id: "seed-p",
          source_asset: "USDC",
          destination_asset: "USD",
          source: { crypto: { network: "ETHEREUM" } },
          destination: { profile: { profile_id: "seed-q" } },
        },
      ],
    });
    return { orderId: orders.items[0].order.id, ruleId: rules.items[0].id };
  }

  before(async () => {
    sandbox = await startSandbox({ rateLimitRps: 0, tokenRateLimitRps: 0 });
  });
  beforeEach(async () => {
    sandbox.reset();
    token = await tokenFor(sandbox);
  });
  after(() => sandbox.close());

  it("seeds every resource through the admin surface and counts them in stats", async () => {
    const { orderId } = await seedAll();
    const transfer = await send(sandbox, token, "POST", INTERNAL_TRANSFER, {
      from_profile_id: "seed-p",
      to_profile_id: "seed-q",
      amount: "0.5",
      asset: "BTC",
    });
    assert.equal(transfer.status, 200);
    const stats = (await adminOk(sandbox, "GET", "/stats")).records;
    assert.deepEqual(stats, {
      profiles: 2,
      quoteExecutions: 1,
      orders: 1,
      transfers: 1,
      depositAddresses: 1,
      orchestrationRules: { active: 1, deleted: 0 },
    });
    assert.equal((await get(sandbox, token, orderPath("seed-p", orderId))).status, 200);
    assert.deepEqual((await adminOk(sandbox, "GET", "/balances?profile_id=seed-q")).items, [
      { profile_id: "seed-q", asset: "BTC", available: "0.5" },
    ]);
  });

  it("shares one store between the programmatic API and the admin surface", async () => {
    await seedAll();
    const [order] = sandbox.seedOrders([
      { profile_id: "seed-p", side: "SELL", market: "ETHUSD", type: "MARKET", base_amount: "3" },
    ]);
    const served = await get(sandbox, token, orderPath("seed-p", order!.order.id));
    assert.deepEqual(served.body, order!.order);
    assert.throws(
      () =>
        sandbox.seedOrders([
          {
            profile_id: "seed-p",
            side: "SELL",
            market: "ETHUSD",
            type: "MARKET",
            base_amount: "3",
            id: order!.order.id,
          },
        ]),
      SeedConflictError,
    );
    assert.throws(
      () => sandbox.setBalances([{ profile_id: "x", asset: "BTC", amount: "1.5.5" }]),
      RangeError,
    );
  });

  it("clears every seeded resource on reset, programmatic and over HTTP", async () => {
    for (const doReset of [
      () => sandbox.reset(),
      async () => void (await adminOk(sandbox, "POST", "/reset")),
    ]) {
      const { orderId, ruleId } = await seedAll();
      await doReset();
      token = await tokenFor(sandbox);
      assertProblem(
        await get(sandbox, token, quoteExecutionsPath("seed-p")),
        404,
        /profile seed-p not found/,
      );
      assertProblem(await get(sandbox, token, orderPath("seed-p", orderId)), 404);
      assertProblem(await send(sandbox, token, "DELETE", rulePath(ruleId)), 404);
      assert.deepEqual((await get(sandbox, token, DEPOSIT_ADDRESSES)).body.items, []);
      assert.deepEqual((await adminOk(sandbox, "GET", "/balances?profile_id=seed-p")).items, []);
      assert.deepEqual((await adminOk(sandbox, "GET", "/transfers")).items, []);
      assert.deepEqual(sandbox.stats().records, {
        profiles: 0,
        quoteExecutions: 0,
        orders: 0,
        transfers: 0,
        depositAddresses: 0,
        orchestrationRules: { active: 0, deleted: 0 },
      });
      // Ids and ref_ids are free again after a reset.
      await seedAll();
      sandbox.reset();
    }
  });

  it("refuses invalid quote-execution seeds with 400 naming the item and field, storing none", async () => {
    const bad: [unknown, RegExp][] = [
      [execution({ market: "BTCJPY" }), /items\[1\]: market must be one of ETHEUR/],
      [execution({ price: 65000.5 }), /price must be a decimal string.*not a JSON number/],
      [
        execution({ base_amount: "0.0000000000000000001" }),
        /base_amount has 19 decimals; at most 18/,
      ],
      [execution({ base_asset: "ETH" }), /base_asset of market BTCUSD is BTC, got ETH/],
      [
        execution({ status: "CREATED", settled_at: "2024-01-01T00:00:00Z" }),
        /CREATED quote execution has no settled_at/,
      ],
      [
        execution({ created_at: "2024-01-02T00:00:00Z", settled_at: "2024-01-01T00:00:00Z" }),
        /settled_at must not precede created_at/,
      ],
      [execution({ metadata: { k: "v".repeat(101) } }), /metadata\.k has 101 characters/],
      [execution({ fee: "1" }), /unknown field "fee"/],
      [execution({ profile_id: undefined }), /profile_id is required/],
    ];
    for (const [item, detail] of bad) {
      assertProblem(
        await admin(sandbox, "POST", "/quote-executions", { items: [execution(), item] }),
        400,
        detail,
      );
    }
    assertProblem(
      await admin(sandbox, "POST", "/quote-executions", { profile_id: "p", count: -1 }),
      400,
      /count must be an integer/,
    );
    assertProblem(
      await admin(sandbox, "POST", "/quote-executions", { profile_id: "p", count: 1, colour: 1 }),
      400,
      /unknown field "colour"/,
    );
    assertProblem(
      await admin(sandbox, "POST", "/quote-executions", { items: "all" }),
      400,
      /items must be an array/,
    );
    assertProblem(await get(sandbox, token, quoteExecutionsPath("seed-p")), 404, /not found/);
  });

  it("refuses a duplicate id or ref_id with 409, storing nothing of the batch", async () => {
    await adminOk(sandbox, "POST", "/quote-executions", { items: [execution({ id: "exec-1" })] });
    assertProblem(
      await admin(sandbox, "POST", "/quote-executions", {
        items: [execution({ id: "exec-2" }), execution({ id: "exec-1" })],
      }),
      409,
      /quote execution with id exec-1 already exists/,
    );
    assert.equal((await get(sandbox, token, quoteExecutionsPath("seed-p"))).body.total_count, 1);
    await adminOk(sandbox, "POST", "/deposit-addresses", {
      items: [{ profile_id: "seed-p", crypto_network: "BASE", ref_id: "dup" }],
    });
    assertProblem(
      await admin(sandbox, "POST", "/deposit-addresses", {
        items: [
          { profile_id: "seed-p", crypto_network: "BASE", ref_id: "fresh" },
          { profile_id: "seed-p", crypto_network: "INK", ref_id: "dup" },
        ],
      }),
      409,
      /deposit address with ref_id "dup" already exists/,
    );
    assert.equal(
      (await get(sandbox, token, DEPOSIT_ADDRESSES, { ref_ids: "fresh" })).body.items.length,
      0,
    );
    assertProblem(
      await admin(sandbox, "POST", "/deposit-addresses", {
        items: [{ profile_id: "seed-p", crypto_network: "DOGE" }],
      }),
      400,
      /items\[0\]: crypto_network must be one of BITCOIN/,
    );
  });

  it("injects failures on every new endpoint without committing anything", async () => {
    const { orderId, ruleId } = await seedAll();
    const calls: (() => Promise<Answer>)[] = [
      () => get(sandbox, token, quoteExecutionsPath("seed-p")),
      () => get(sandbox, token, orderPath("seed-p", orderId)),
      () =>
        send(sandbox, token, "POST", INTERNAL_TRANSFER, {
          from_profile_id: "seed-p",
          to_profile_id: "seed-q",
          amount: "1",
          asset: "BTC",
        }),
      () => get(sandbox, token, DEPOSIT_ADDRESSES),
      () => send(sandbox, token, "DELETE", rulePath(ruleId)),
    ];
    await adminOk(sandbox, "PUT", "/faults", { fail_rate: 1 });
    try {
      for (const call of calls) {
        const res = await call();
        assert.ok([500, 502, 503].includes(res.status), res.text);
        assertProblem(res, res.status, /injected fault/);
      }
    } finally {
      await adminOk(sandbox, "PUT", "/faults", { fail_rate: 0 });
    }
    assert.equal(sandbox.balancesOf("seed-p")[0]?.available, "2", "no transfer was committed");
    assert.equal(sandbox.orchestrationRules()[0]?.status, "ACTIVE", "no rule was deleted");
    for (const call of calls) assert.equal((await call()).status, 200);
  });

  it("commits a rule deletion whose answer the ambiguous fault drops; the retry then answers 404", async () => {
    const [r] = sandbox.seedOrchestrationRules([
      {
        ref_id: "ambiguous-rule",
        profile_id: "seed-p",
        source_asset: "USDC",
        destination_asset: "USD",
        source: { fiat: {} },
        destination: { profile: { profile_id: "seed-p" } },
      },
    ]);
    sandbox.setFaults({ ambiguousRate: 1 });
    try {
      await assert.rejects(send(sandbox, token, "DELETE", rulePath(r!.id)));
    } finally {
      sandbox.setFaults({ ambiguousRate: 0 });
    }
    assertProblem(await send(sandbox, token, "DELETE", rulePath(r!.id)), 404, /it was deleted at/);
  });

  it("answers 405 for a wrong method on a known path of the new endpoints", async () => {
    const cases: [string, string][] = [
      ["GET", INTERNAL_TRANSFER],
      ["PUT", DEPOSIT_ADDRESSES],
      ["POST", quoteExecutionsPath("seed-p")],
      ["DELETE", orderPath("seed-p", "x")],
      ["PATCH", rulePath("x")],
    ];
    for (const [method, path] of cases) {
      assertProblem(
        await send(sandbox, token, method, path),
        405,
        new RegExp(`${method} is not allowed`),
      );
    }
  });
});
