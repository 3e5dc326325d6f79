import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Order, type Sandbox, startSandbox } from "../../src/index.ts";
import { admin, adminOk, get, orderPath } from "../helpers/sandbox-api.ts";
import { assertProblem, tokenFor } from "../helpers/sandbox-http.ts";

const PROFILE = "trader-1";
const T0 = Date.parse("2024-03-01T10:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();
const HOUR = 3600 * 1000;

/** The platform's validity matrix, written out cell by cell (not read from the sandbox). */
const MATRIX: Record<string, Record<string, boolean>> = {
  MARKET: { IOC: true, GTC: false, GTT: false, FOK: false },
  LIMIT: { IOC: true, GTC: true, GTT: true, FOK: true },
  POST_ONLY_LIMIT: { IOC: true, GTC: true, GTT: true, FOK: true },
  STOP_MARKET: { IOC: false, GTC: true, GTT: true, FOK: false },
  STOP_LIMIT: { IOC: false, GTC: true, GTT: true, FOK: false },
};

/** A well-formed order of each type (amounts as the platform requires them). */
function orderOf(type: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const amounts: Record<string, Record<string, string>> = {
    MARKET: { base_amount: "0.5" },
    LIMIT: { price: "190.23", base_amount: "2.35781498" },
    POST_ONLY_LIMIT: { price: "190.23", base_amount: "1" },
    STOP_MARKET: { stop_price: "150", base_amount: "1" },
    STOP_LIMIT: { stop_price: "150", price: "149.5", base_amount: "1" },
  };
  return {
    profile_id: PROFILE,
    side: "SELL",
    market: "ETHUSD",
    type,
    created_at: iso(T0),
    ...amounts[type],
    ...extra,
  };
}

describe("sandbox orders: acceptance rules at seeding and GET /v2/profiles/{profile_id}/orders/{id}", () => {
  let sandbox: Sandbox;
  let token: string;

  const seed = async (...orders: Record<string, unknown>[]) =>
    (await adminOk(sandbox, "POST", "/orders", { items: orders })).items as {
      order: Order;
      rejection_reason?: string;
    }[];
  const fetchOrder = async (o: Order) => {
    const res = await get(sandbox, token, orderPath(o.profile_id, o.id));
    assert.equal(res.status, 200, res.text);
    return res.body as Order;
  };

  before(async () => {
    sandbox = await startSandbox({ rateLimitRps: 0, tokenRateLimitRps: 0 });
    token = await tokenFor(sandbox);
  });
  after(() => sandbox.close());

  it("accepts or rejects every cell of the time-in-force matrix", async () => {
    for (const [type, row] of Object.entries(MATRIX)) {
      for (const [tif, valid] of Object.entries(row)) {
        const extra: Record<string, unknown> = { time_in_force: tif };
        if (tif === "GTT") extra.expiration_date = iso(T0 + 60_000);
        const [result] = await seed(orderOf(type, extra));
        const served = await fetchOrder(result!.order);
        assert.equal(served.time_in_force, tif);
        if (valid) {
          assert.equal(result!.order.status, "SUBMITTED", `${type} ${tif} is valid`);
          // Placed in 2024: a GTT order reads EXPIRED once its expiration_date has passed.
          assert.equal(served.status, tif === "GTT" ? "EXPIRED" : "SUBMITTED", `${type} ${tif}`);
          assert.equal(result!.rejection_reason, undefined);
        } else {
          assert.equal(served.status, "REJECTED", `${type} ${tif} is not valid`);
          assert.match(
            result!.rejection_reason ?? "",
            new RegExp(`time_in_force ${tif} is not valid for a ${type} order`),
          );
        }
      }
    }
  });

  it("gives each order type its default time in force when none is named", async () => {
    const defaults: Record<string, string> = {
      MARKET: "IOC",
      LIMIT: "GTC",
      POST_ONLY_LIMIT: "GTC",
      STOP_MARKET: "GTC",
      STOP_LIMIT: "GTC",
    };
    for (const [type, tif] of Object.entries(defaults)) {
      const [result] = await seed(orderOf(type));
      const served = await fetchOrder(result!.order);
      assert.equal(served.time_in_force, tif, type);
      assert.equal(served.status, "SUBMITTED", type);
    }
  });

  it("rejects a GTT expiring 10 s or less after placement and accepts one expiring later", async () => {
    const cases: [string, boolean][] = [
      [iso(T0 + 9_999), false],
      [iso(T0 + 10_000), false],
      ["2024-03-01T10:00:10.000000000Z", false],
      ["2024-03-01T10:00:10.0000001Z", true],
      [iso(T0 + 10_001), true],
      ["2024-03-01T11:00:10.001+01:00", true],
      [iso(T0 + 3_600_000), true],
    ];
    for (const [expiration, accepted] of cases) {
      const [result] = await seed(
        orderOf("LIMIT", { time_in_force: "GTT", expiration_date: expiration }),
      );
      const served = await fetchOrder(result!.order);
      assert.equal(result!.order.status, accepted ? "SUBMITTED" : "REJECTED", expiration);
      assert.equal(served.status, accepted ? "EXPIRED" : "REJECTED", expiration);
      assert.equal(typeof served.expiration_date, "string");
      if (!accepted) assert.match(result!.rejection_reason ?? "", /more than 10 s after placement/);
    }
    const [noDate] = await seed(orderOf("STOP_LIMIT", { time_in_force: "GTT" }));
    assert.equal((await fetchOrder(noDate!.order)).status, "REJECTED");
    assert.match(noDate!.rejection_reason ?? "", /needs an expiration_date/);
    const [dateWithoutGtt] = await seed(orderOf("LIMIT", { expiration_date: iso(T0 + 60_000) }));
    assert.equal((await fetchOrder(dateWithoutGtt!.order)).status, "REJECTED");
  });

  it("rejects identity_id without identity_account_id and the reverse, and accepts them together", async () => {
    const [lonelyIdentity, lonelyAccount, both] = await seed(
      orderOf("LIMIT", { identity_id: "id-1" }),
      orderOf("LIMIT", { identity_account_id: "acct-1" }),
      orderOf("LIMIT", { identity_id: "id-1", identity_account_id: "acct-1" }),
    );
    assert.equal((await fetchOrder(lonelyIdentity!.order)).status, "REJECTED");
    assert.match(
      lonelyIdentity!.rejection_reason ?? "",
      /identity_id was given without identity_account_id/,
    );
    assert.equal((await fetchOrder(lonelyAccount!.order)).status, "REJECTED");
    const served = await fetchOrder(both!.order);
    assert.equal(served.status, "SUBMITTED");
    assert.equal(served.identity_id, "id-1");
    assert.equal(served.identity_account_id, "acct-1");
  });

  it("serves the order table's fields, amounts as decimal strings", async () => {
    const [limit, stop] = await seed(
      orderOf("LIMIT", {
        ref_id: "fields-1",
        side: "BUY",
        price: "190.2300",
        metadata: { customer_id: "c-9" },
        status: "FILLED",
        amount_filled: "2.35781498",
        volume_weighted_average_price: "190.23",
        modified_at: iso(T0 + 5_000),
      }),
      orderOf("STOP_LIMIT", {
        time_in_force: "GTT",
        expiration_date: iso(T0 + HOUR),
        is_triggered: true,
      }),
    );
    const served = await fetchOrder(limit!.order);
    assert.deepEqual(served, {
      id: limit!.order.id,
      profile_id: PROFILE,
      ref_id: "fields-1",
      status: "FILLED",
      side: "BUY",
      market: "ETHUSD",
      type: "LIMIT",
      price: "190.23",
      base_amount: "2.35781498",
      quote_amount: "",
      metadata: { customer_id: "c-9" },
      created_at: iso(T0),
      modified_at: iso(T0 + 5_000),
      amount_filled: "2.35781498",
      volume_weighted_average_price: "190.23",
      time_in_force: "GTC",
      is_triggered: false,
    });
    const stopLimit = await fetchOrder(stop!.order);
    assert.equal(stopLimit.stop_price, "150");
    assert.equal(stopLimit.price, "149.5");
    assert.equal(stopLimit.expiration_date, iso(T0 + HOUR));
    assert.equal(stopLimit.is_triggered, true);
  });

  it("reads a GTT order EXPIRED, modified at its expiration, once its expiration_date has passed", async () => {
    const now = Date.now();
    const [soon, later] = await seed(
      orderOf("LIMIT", {
        time_in_force: "GTT",
        created_at: iso(now - 20_000),
        expiration_date: iso(now - 5_000),
      }),
      orderOf("LIMIT", {
        time_in_force: "GTT",
        created_at: iso(now),
        expiration_date: iso(now + HOUR),
      }),
    );
    const expired = await fetchOrder(soon!.order);
    assert.equal(expired.status, "EXPIRED");
    assert.equal(expired.modified_at, iso(now - 5_000));
    assert.equal((await fetchOrder(later!.order)).status, "SUBMITTED");
  });

  it("answers the amounts an order type does not have as empty strings, not zeros", async () => {
    const [market, limit] = await seed(
      orderOf("MARKET", { side: "SELL" }),
      orderOf("LIMIT", { side: "BUY" }),
    );
    const m = await fetchOrder(market!.order);
    assert.deepEqual([m.price, m.base_amount, m.quote_amount], ["", "0.5", ""]);
    assert.equal(m.volume_weighted_average_price, "", "nothing filled, no average price");
    assert.equal(m.amount_filled, "0");
    const l = await fetchOrder(limit!.order);
    assert.deepEqual([l.price, l.base_amount, l.quote_amount], ["190.23", "2.35781498", ""]);
  });

  it("refuses a ref_id held by an open order with 409 and stores nothing", async () => {
    await seed(orderOf("LIMIT", { ref_id: "open-ref", status: "OPEN" }));
    const res = await admin(sandbox, "POST", "/orders", {
      items: [
        orderOf("LIMIT", { id: "11111111-1111-4111-8111-111111111111" }),
        orderOf("LIMIT", { ref_id: "open-ref", created_at: iso(T0 + 48 * HOUR) }),
      ],
    });
    assertProblem(res, 409, /ref_id "open-ref" is in use by order .* which is still OPEN/);
    assertProblem(
      await get(sandbox, token, orderPath(PROFILE, "11111111-1111-4111-8111-111111111111")),
      404,
    );
  });

  it("lets a ref_id be reused only once its order has been closed for more than 24 hours", async () => {
    for (const status of ["FILLED", "CANCELLED", "REJECTED"]) {
      const ref = `closed-${status}`;
      const closedAt = T0 + HOUR;
      await seed(orderOf("LIMIT", { ref_id: ref, status, modified_at: iso(closedAt) }));
      for (const placed of [closedAt + HOUR, closedAt + 24 * HOUR]) {
        const refused = await admin(sandbox, "POST", "/orders", {
          items: [orderOf("LIMIT", { ref_id: ref, created_at: iso(placed) })],
        });
        assertProblem(
          refused,
          409,
          new RegExp(`closed \\(${status}\\).*reused only after ${iso(closedAt + 24 * HOUR)}`),
        );
      }
      const [reused] = await seed(
        orderOf("LIMIT", { ref_id: ref, created_at: iso(closedAt + 24 * HOUR + 1) }),
      );
      assert.equal((await fetchOrder(reused!.order)).ref_id, ref);
    }
  });

  it("refuses two orders sharing a ref_id in one seed, keeping neither", async () => {
    const res = await admin(sandbox, "POST", "/orders", {
      items: [
        orderOf("LIMIT", { id: "22222222-2222-4222-8222-222222222222", ref_id: "twice" }),
        orderOf("LIMIT", { ref_id: "twice", created_at: iso(T0 + 1) }),
      ],
    });
    assertProblem(res, 409, /ref_id "twice"/);
    assertProblem(
      await get(sandbox, token, orderPath(PROFILE, "22222222-2222-4222-8222-222222222222")),
      404,
    );
  });

  it("answers 404 for an order of another profile, the same as for an unknown order", async () => {
    const [mine] = await seed(orderOf("LIMIT"));
    await seed(orderOf("LIMIT", { profile_id: "trader-2" }));
    const other = await get(sandbox, token, orderPath("trader-2", mine!.order.id));
    assertProblem(other, 404, new RegExp(`order ${mine!.order.id} not found in profile trader-2`));
    assert.ok(!other.text.includes(PROFILE), "the owning profile is not revealed");
    assertProblem(
      await get(sandbox, token, orderPath(PROFILE, "no-such-order")),
      404,
      /order no-such-order not found/,
    );
    assert.equal((await get(sandbox, token, orderPath(PROFILE, mine!.order.id))).status, 200);
  });

  it("refuses malformed order seeds with 400 naming the item and field", async () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [orderOf("ICEBERG"), /items\[0\]: type must be one of MARKET, LIMIT/],
      [orderOf("LIMIT", { price: undefined }), /price is required for this order type/],
      [orderOf("MARKET", { side: "BUY" }), /quote_amount is required/],
      [orderOf("LIMIT", { price: 190.23 }), /price must be a decimal string.*not a JSON number/],
      [
        orderOf("LIMIT", { time_in_force: "DAY" }),
        /time_in_force must be one of IOC, GTC, GTT, FOK/,
      ],
      [orderOf("LIMIT", { expiration_date: "tomorrow" }), /expiration_date must be an RFC 3339/],
      [orderOf("LIMIT", { colour: "red" }), /unknown field "colour"/],
      [
        orderOf("LIMIT", {
          metadata: Object.fromEntries([1, 2, 3, 4, 5, 6, 7].map((i) => [`k${i}`, "v"])),
        }),
        /7 pairs; at most 6/,
      ],
    ];
    for (const [order, detail] of bad) {
      assertProblem(await admin(sandbox, "POST", "/orders", { items: [order] }), 400, detail);
    }
  });
});
