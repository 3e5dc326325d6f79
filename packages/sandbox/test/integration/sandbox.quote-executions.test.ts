import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { MARKETS, type QuoteExecution, type Sandbox, startSandbox } from "../../src/index.ts";
import { adminOk, byKeyset, get, quoteExecutionsPath, walkAll } from "../helpers/sandbox-api.ts";
import { assertProblem, tokenFor } from "../helpers/sandbox-http.ts";

const P1 = "profile-1";
const P2 = "profile-2";
const DECIMAL = /^(0|[1-9]\d*)(\.\d*[1-9])?$/;
const T0 = Date.parse("2024-06-01T12:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

describe("sandbox GET /v2/profiles/{profile_id}/quote-executions", () => {
  let sandbox: Sandbox;
  let token: string;
  let all: QuoteExecution[];

  before(async () => {
    sandbox = await startSandbox({ rateLimitRps: 0, tokenRateLimitRps: 0 });
    token = await tokenFor(sandbox);
    await adminOk(sandbox, "POST", "/quote-executions", { profile_id: P1, count: 250, seed: 7 });
    await adminOk(sandbox, "POST", "/quote-executions", {
      items: [0, 1, 2, 1000].map((dt, i) => ({
        profile_id: P2,
        market: "ETHUSD",
        side: i % 2 ? "SELL" : "BUY",
        price: "0.1",
        base_amount: "0.2",
        created_at: iso(T0 + dt),
      })),
    });
    await adminOk(sandbox, "POST", "/balances", {
      items: [{ profile_id: "empty", asset: "USD", amount: "0" }],
    });
    all = (await walkAll(sandbox, token, quoteExecutionsPath(P1), { limit: "1000" })).items;
  });
  after(() => sandbox.close());

  it("lists a profile's executions newest first, every amount a decimal string", async () => {
    const res = await get(sandbox, token, quoteExecutionsPath(P1), { limit: "50" });
    assert.equal(res.status, 200);
    assert.equal(res.body.total_count, 250);
    assert.equal(res.body.items.length, 50);
    assert.deepEqual(res.body.items, [...res.body.items].sort(byKeyset("DESC")));
    for (const e of res.body.items as QuoteExecution[]) {
      assert.equal(e.profile_id, P1);
      assert.ok((MARKETS as readonly string[]).includes(e.market));
      assert.equal(`${e.base_asset}${e.quote_asset}`, e.market);
      assert.ok(["BUY", "SELL"].includes(e.side));
      for (const field of ["price", "base_amount", "quote_amount"] as const) {
        assert.equal(typeof e[field], "string", `${field} is a string, never a number`);
        assert.match(e[field], DECIMAL);
      }
      assert.match(e.id, /^[0-9a-f-]{36}$/);
      assert.match(e.quote_id, /^[0-9a-f-]{36}$/);
      assert.equal(typeof e.metadata, "object");
      assert.ok(!Number.isNaN(Date.parse(e.created_at)));
      if (e.status === "SETTLED") assert.equal(typeof e.settled_at, "string");
      else assert.equal(e.settled_at, undefined, "a CREATED execution has no settled_at");
    }
  });

  it("computes the default quote_amount as price × base_amount without floating point", async () => {
    const res = await get(sandbox, token, quoteExecutionsPath(P2));
    assert.ok(res.body.items.length > 0);
    for (const e of res.body.items) assert.equal(e.quote_amount, "0.02"); // 0.1 * 0.2 is 0.020000000000000004 in floats
  });

  it("walks all 250 executions to the end in both orders with no loss or repetition", async () => {
    assert.equal(all.length, 250);
    assert.equal(new Set(all.map((e) => e.id)).size, 250);
    for (const order of ["DESC", "ASC"] as const) {
      const walk = await walkAll(sandbox, token, quoteExecutionsPath(P1), { limit: "7", order });
      assert.equal(walk.pages, Math.ceil(250 / 7));
      assert.deepEqual(
        walk.items.map((e) => e.id),
        [...all].sort(byKeyset(order)).map((e) => e.id),
      );
    }
  });

  it("reports total_count of the whole filtered listing on every page of a walk", async () => {
    let cursor = "";
    const expected = all.filter((e) => e.side === "BUY").length;
    do {
      const res = await get(sandbox, token, quoteExecutionsPath(P1), {
        side: "BUY",
        limit: "40",
        ...(cursor ? { page_cursor: cursor } : {}),
      });
      assert.equal(res.status, 200);
      assert.equal(res.body.total_count, expected);
      cursor = res.body.next_page_cursor;
    } while (cursor);
  });

  it("keeps a walk whole while executions are added before and after its position", async () => {
    const profile = "profile-walk";
    await adminOk(sandbox, "POST", "/quote-executions", {
      profile_id: profile,
      count: 60,
      seed: 3,
    });
    const original = (
      await walkAll(sandbox, token, quoteExecutionsPath(profile), { limit: "1000" })
    ).items;
    let added = 0;
    const walk = await walkAll(
      sandbox,
      token,
      quoteExecutionsPath(profile),
      { limit: "9" },
      async () => {
        // One older than everything so far (still ahead of a DESC walk) and one newer (behind it).
        await adminOk(sandbox, "POST", "/quote-executions", {
          items: [
            {
              profile_id: profile,
              market: "BTCUSD",
              side: "BUY",
              price: "1",
              base_amount: "1",
              created_at: iso(Date.UTC(2000, 0, 1) - added),
            },
            {
              profile_id: profile,
              market: "BTCUSD",
              side: "BUY",
              price: "1",
              base_amount: "1",
              created_at: iso(Date.UTC(2030, 0, 1) + added),
            },
          ],
        });
        added++;
      },
    );
    const ids = walk.items.map((e) => e.id);
    assert.equal(new Set(ids).size, ids.length, "no execution is returned twice");
    for (const e of original) assert.ok(ids.includes(e.id), `execution ${e.id} was not lost`);
    assert.equal(
      ids.length,
      original.length + added,
      "the past ones are reached, the future ones are not",
    );
  });

  it("filters by side, market and status, alone and together", async () => {
    const cases: Record<string, string>[] = [
      { side: "SELL" },
      { market: "BTCUSD" },
      { status: "CREATED" },
      { side: "BUY", status: "SETTLED" },
      { side: "SELL", market: "ETHEUR", status: "SETTLED" },
    ];
    for (const filters of cases) {
      const expected = all.filter((e) =>
        Object.entries(filters).every(
          ([k, v]) => (e as unknown as Record<string, string>)[k] === v,
        ),
      );
      const walk = await walkAll(sandbox, token, quoteExecutionsPath(P1), {
        ...filters,
        limit: "11",
      });
      assert.deepEqual(
        walk.items.map((e) => e.id),
        expected.map((e) => e.id),
        JSON.stringify(filters),
      );
      const first = await get(sandbox, token, quoteExecutionsPath(P1), { ...filters, limit: "1" });
      assert.equal(first.body.total_count, expected.length);
    }
  });

  it("includes executions exactly at created_at.begin and created_at.end", async () => {
    const ids = async (params: Record<string, string>) =>
      (
        await get(sandbox, token, quoteExecutionsPath(P2), { ...params, order: "ASC" })
      ).body.items.map((e: QuoteExecution) => e.created_at);
    assert.deepEqual(
      await ids({ "created_at.begin": iso(T0 + 1), "created_at.end": iso(T0 + 2) }),
      [iso(T0 + 1), iso(T0 + 2)],
    );
    assert.deepEqual(
      await ids({ "created_at.begin": iso(T0 + 1), "created_at.end": iso(T0 + 1) }),
      [iso(T0 + 1)],
    );
    assert.deepEqual(await ids({ "created_at.begin": "2024-06-01T12:00:00.0015Z" }), [
      iso(T0 + 2),
      iso(T0 + 1000),
    ]);
    assert.deepEqual(await ids({ "created_at.end": "2024-06-01T14:00:00.001+02:00" }), [
      iso(T0),
      iso(T0 + 1),
    ]);
    assert.deepEqual(
      await ids({ "created_at.begin": iso(T0 + 3), "created_at.end": iso(T0 + 999) }),
      [],
    );
  });

  it("pages by pagination.limit and pagination.offset, matching the keyset walk", async () => {
    const pages: string[] = [];
    for (let offset = 0; offset < 250; offset += 60) {
      const res = await get(sandbox, token, quoteExecutionsPath(P1), {
        "pagination.limit": "60",
        "pagination.offset": String(offset),
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.total_count, 250);
      pages.push(...res.body.items.map((e: QuoteExecution) => e.id));
    }
    assert.deepEqual(
      pages,
      all.map((e) => e.id),
    );
    const beyond = await get(sandbox, token, quoteExecutionsPath(P1), {
      "pagination.offset": "250",
    });
    assert.deepEqual(beyond.body.items, []);
    assert.equal(beyond.body.next_page_cursor, "");
  });

  it("refuses page_cursor combined with pagination.limit or pagination.offset, and limit with pagination.limit", async () => {
    const first = await get(sandbox, token, quoteExecutionsPath(P1), { limit: "5" });
    const cursor = first.body.next_page_cursor;
    for (const extra of [
      { "pagination.limit": "5" },
      { "pagination.offset": "5" },
      { "pagination.limit": "5", "pagination.offset": "0" },
    ]) {
      assertProblem(
        await get(sandbox, token, quoteExecutionsPath(P1), { page_cursor: cursor, ...extra }),
        400,
        /page_cursor cannot be combined with pagination\.limit or pagination\.offset/,
      );
    }
    assertProblem(
      await get(sandbox, token, quoteExecutionsPath(P1), { limit: "5", "pagination.limit": "5" }),
      400,
      /limit or pagination\.limit, not both/,
    );
  });

  it("refuses a cursor with other filters, of another profile, with a changed order, or forged", async () => {
    const first = await get(sandbox, token, quoteExecutionsPath(P1), { limit: "5", side: "BUY" });
    const cursor = first.body.next_page_cursor;
    assert.notEqual(cursor, "");
    const refusals: [string, Record<string, string>, RegExp][] = [
      [P1, { side: "SELL" }, /another listing/],
      [P1, {}, /another listing/],
      [P2, { side: "BUY" }, /another listing/],
      [P1, { side: "BUY", order: "ASC" }, /issued for order DESC, not ASC/],
      [P1, { side: "BUY", page_cursor: `${cursor}x` }, /not a valid cursor/],
    ];
    for (const [profile, params, detail] of refusals) {
      assertProblem(
        await get(sandbox, token, quoteExecutionsPath(profile), { page_cursor: cursor, ...params }),
        400,
        detail,
      );
    }
    const next = await get(sandbox, token, quoteExecutionsPath(P1), {
      side: "BUY",
      limit: "5",
      page_cursor: cursor,
    });
    assert.equal(next.status, 200, "the same filters with the cursor continue the walk");
  });

  it("refuses bad filter values, order, order_by, limits, times and unknown parameters with 400 naming them", async () => {
    const bad: [Record<string, string>, RegExp][] = [
      [{ side: "HOLD" }, /side must be one of BUY, SELL/],
      [{ market: "MATICUSD" }, /market must be one of ETHEUR/],
      [{ status: "FILLED" }, /status must be one of CREATED, SETTLED/],
      [{ order: "UP" }, /order must be one of DESC, ASC, got "UP"/],
      [{ order_by: "PRICE" }, /order_by must be one of CREATED_AT, got "PRICE"/],
      [{ limit: "0" }, /limit must be an integer between 1 and 1000/],
      [{ limit: "1001" }, /limit must be an integer between 1 and 1000/],
      [{ "pagination.offset": "-1" }, /pagination\.offset must be an integer/],
      [{ "created_at.begin": "2024-06-01" }, /created_at\.begin must be an RFC 3339 date-time/],
      [{ "created_at.end": "2024-02-30T00:00:00Z" }, /created_at\.end must be an RFC 3339/],
      [{ created_at: "2024-06-01T00:00:00Z" }, /unknown query parameter "created_at"/],
    ];
    for (const [params, detail] of bad) {
      assertProblem(await get(sandbox, token, quoteExecutionsPath(P1), params), 400, detail);
    }
    assert.equal(
      (await get(sandbox, token, quoteExecutionsPath(P1), { order_by: "CREATED_AT", order: "ASC" }))
        .status,
      200,
    );
  });

  it("answers 404 for an unknown profile and an empty listing for a profile without executions", async () => {
    assertProblem(
      await get(sandbox, token, quoteExecutionsPath("nobody")),
      404,
      /profile nobody not found/,
    );
    const empty = await get(sandbox, token, quoteExecutionsPath("empty"));
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.body, { total_count: 0, items: [], next_page_cursor: "" });
  });
});
