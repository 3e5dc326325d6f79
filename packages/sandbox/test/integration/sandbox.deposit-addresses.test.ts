import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  CRYPTO_NETWORKS,
  type DepositAddress,
  type Sandbox,
  startSandbox,
} from "../../src/index.ts";
import {
  adminOk,
  byKeyset,
  DEPOSIT_ADDRESSES,
  get,
  type Params,
  walkAll,
} from "../helpers/sandbox-api.ts";
import { assertProblem, tokenFor } from "../helpers/sandbox-http.ts";

const PROFILES = ["dp-0", "dp-1", "dp-2", "dp-3"];
const IDENTITIES = ["id-0", "id-1", "id-2", "id-3", "id-4", "id-5"];
const T0 = Date.parse("2024-05-05T05:05:05.000Z");
const iso = (ms: number) => new Date(ms).toISOString();
const LIST_FILTERS = [
  "profile_ids",
  "identity_ids",
  "account_ids",
  "ids",
  "ref_ids",
  "networks",
] as const;
const FIELD = {
  profile_ids: "profile_id",
  identity_ids: "identity_id",
  account_ids: "account_id",
  ids: "id",
  ref_ids: "ref_id",
  networks: "crypto_network",
} as const;

describe("sandbox GET /v2/transfer/deposit-addresses", () => {
  let sandbox: Sandbox;
  let token: string;
  let all: DepositAddress[];

  before(async () => {
    sandbox = await startSandbox({ rateLimitRps: 0, tokenRateLimitRps: 0 });
    token = await tokenFor(sandbox);
    await adminOk(sandbox, "POST", "/deposit-addresses", {
      count: 300,
      seed: 5,
      profile_ids: PROFILES,
      identity_ids: IDENTITIES,
    });
    // Three addresses a millisecond apart, and bare ones without identity, account or ref_id.
    await adminOk(sandbox, "POST", "/deposit-addresses", {
      items: [
        ...[0, 1, 2].map((dt) => ({
          profile_id: "edge",
          crypto_network: "SOLANA",
          identity_id: "id-edge",
          account_id: "acct-edge",
          ref_id: `edge-${dt}`,
          created_at: iso(T0 + dt),
        })),
        { profile_id: "bare", crypto_network: "BITCOIN", created_at: iso(T0 + 5) },
        { profile_id: "bare", crypto_network: "STELLAR", created_at: iso(T0 + 5) },
      ],
    });
    all = (await walkAll(sandbox, token, DEPOSIT_ADDRESSES, { limit: "1000" })).items;
  });
  after(() => sandbox.close());

  it("lists 100 addresses newest first by default, each with its fields", async () => {
    const res = await get(sandbox, token, DEPOSIT_ADDRESSES);
    assert.equal(res.status, 200);
    assert.equal(res.body.items.length, 100);
    assert.notEqual(res.body.next_page_cursor, "");
    assert.equal(res.body.total_count, undefined, "this listing has no total_count");
    assert.deepEqual(res.body.items, [...res.body.items].sort(byKeyset("DESC")));
    for (const a of res.body.items as DepositAddress[]) {
      assert.ok((CRYPTO_NETWORKS as readonly string[]).includes(a.crypto_network));
      assert.deepEqual(a.compatible_crypto_networks, [a.crypto_network]);
      assert.equal(typeof a.address, "string");
      assert.ok(a.address.length >= 32);
      assert.equal(typeof a.customer_id, "string");
      assert.equal(a.conversion_target_asset, "NO_CONVERSION");
    }
  });

  it("walks every address to the end in both orders with no loss or repetition", async () => {
    assert.equal(all.length, 305);
    assert.equal(new Set(all.map((a) => a.id)).size, 305);
    for (const order of ["ASC", "DESC"] as const) {
      const walk = await walkAll(sandbox, token, DEPOSIT_ADDRESSES, {
        limit: "13",
        order,
        order_by: "CREATED_AT",
      });
      assert.equal(walk.pages, Math.ceil(305 / 13));
      assert.deepEqual(
        walk.items.map((a) => a.id),
        [...all].sort(byKeyset(order)).map((a) => a.id),
      );
    }
  });

  it("applies all 128 combinations of the seven filters like a reference filter, paging to the end", async () => {
    const pick = <T>(xs: readonly T[], every: number) => xs.filter((_, i) => i % every === 0);
    const values: Record<(typeof LIST_FILTERS)[number], string[]> = {
      profile_ids: [PROFILES[0]!, PROFILES[2]!, "edge"],
      identity_ids: [...IDENTITIES.slice(0, 4), "id-edge"],
      account_ids: [...new Set(all.map((a) => a.account_id).filter((v) => v !== undefined))].slice(
        0,
        5,
      ) as string[],
      ids: pick(all, 3)
        .map((a) => a.id)
        .slice(0, 100),
      ref_ids: pick(all, 2)
        .flatMap((a) => (a.ref_id ? [a.ref_id] : []))
        .slice(0, 100),
      networks: ["BITCOIN", "ETHEREUM", "SOLANA", "STELLAR", "BASE"],
    };
    const sortedTimes = all.map((a) => Date.parse(a.created_at)).sort((x, y) => x - y);
    const from = sortedTimes[40]!;
    const to = sortedTimes[260]!;
    let nonEmpty = 0;
    for (let mask = 0; mask < 128; mask++) {
      const params: Params = { limit: "25" };
      const active = LIST_FILTERS.filter((_, bit) => mask & (1 << bit));
      for (const name of active) params[name] = values[name];
      const timed = (mask & 64) !== 0;
      if (timed) {
        params["created_at.gte"] = iso(from);
        params["created_at.lt"] = iso(to);
      }
      const expected = [...all]
        .filter((a) =>
          active.every((name) => {
            const v = (a as unknown as Record<string, string | undefined>)[FIELD[name]];
            return v !== undefined && values[name].includes(v);
          }),
        )
        .filter(
          (a) => !timed || (Date.parse(a.created_at) >= from && Date.parse(a.created_at) < to),
        )
        .sort(byKeyset("DESC"));
      const walk = await walkAll(sandbox, token, DEPOSIT_ADDRESSES, params);
      assert.deepEqual(
        walk.items.map((a) => a.id),
        expected.map((a) => a.id),
        `filters ${active.join("+")}${timed ? "+created_at" : ""}`,
      );
      if (expected.length > 0) nonEmpty++;
    }
    assert.ok(nonEmpty >= 64, `most combinations select something (${nonEmpty})`);
  });

  it("takes up to 100 entries per list filter and refuses 101 with 400 naming the filter", async () => {
    for (const name of LIST_FILTERS) {
      const entries = (n: number) =>
        Array.from({ length: n }, (_, i) =>
          name === "networks" ? CRYPTO_NETWORKS[i % CRYPTO_NETWORKS.length]! : `x-${i}`,
        );
      const ok = await get(sandbox, token, DEPOSIT_ADDRESSES, { [name]: entries(100) });
      assert.equal(ok.status, 200, `${name} with 100 entries: ${ok.text}`);
      assertProblem(
        await get(sandbox, token, DEPOSIT_ADDRESSES, { [name]: entries(101) }),
        400,
        new RegExp(`${name} takes at most 100 entries, got 101`),
      );
    }
  });

  it("applies each created_at bound exactly at its edge, to the millisecond and below", async () => {
    const times = async (params: Params) =>
      (
        await get(sandbox, token, DEPOSIT_ADDRESSES, {
          profile_ids: "edge",
          order: "ASC",
          ...params,
        })
      ).body.items.map((a: DepositAddress) => Date.parse(a.created_at) - T0);
    const at = iso(T0 + 1);
    assert.deepEqual(await times({ "created_at.lt": at }), [0]);
    assert.deepEqual(await times({ "created_at.lte": at }), [0, 1]);
    assert.deepEqual(await times({ "created_at.eq": at }), [1]);
    assert.deepEqual(await times({ "created_at.gte": at }), [1, 2]);
    assert.deepEqual(await times({ "created_at.gt": at }), [2]);
    assert.deepEqual(await times({ "created_at.gt": iso(T0), "created_at.lt": iso(T0 + 2) }), [1]);
    const between = "2024-05-05T05:05:05.0005Z";
    assert.deepEqual(await times({ "created_at.gte": between }), [1, 2]);
    assert.deepEqual(await times({ "created_at.gt": between }), [1, 2]);
    assert.deepEqual(await times({ "created_at.lte": between }), [0]);
    assert.deepEqual(await times({ "created_at.lt": between }), [0]);
    assert.deepEqual(await times({ "created_at.eq": between }), []);
    assert.deepEqual(await times({ "created_at.eq": "2024-05-05T07:05:05.002+02:00" }), [2]);
    assert.deepEqual(
      await times({ "created_at.gt": iso(T0 + 1), "created_at.lt": iso(T0 + 1) }),
      [],
    );
  });

  it("never matches an address lacking identity_id, account_id or ref_id when filtered on it", async () => {
    const bare = (await get(sandbox, token, DEPOSIT_ADDRESSES, { profile_ids: "bare" })).body
      .items as DepositAddress[];
    assert.equal(bare.length, 2);
    for (const a of bare)
      for (const f of ["identity_id", "account_id", "ref_id"] as const)
        assert.equal(a[f], undefined);
    for (const name of ["identity_ids", "account_ids", "ref_ids"]) {
      const res = await get(sandbox, token, DEPOSIT_ADDRESSES, {
        profile_ids: "bare",
        [name]: ["", "x"],
      });
      assert.deepEqual(res.body.items, [], name);
    }
  });

  it("takes limit up to 1000 and refuses 0, 1001 and non-integers", async () => {
    assert.equal(
      (await get(sandbox, token, DEPOSIT_ADDRESSES, { limit: "1000" })).body.items.length,
      305,
    );
    for (const limit of ["0", "1001", "ten", "1.5"]) {
      assertProblem(
        await get(sandbox, token, DEPOSIT_ADDRESSES, { limit }),
        400,
        /limit must be an integer between 1 and 1000/,
      );
    }
  });

  it("binds a page_cursor to its filters in any entry order, and to its order", async () => {
    const params = { networks: ["BITCOIN", "ETHEREUM"], limit: "5" };
    const first = await get(sandbox, token, DEPOSIT_ADDRESSES, params);
    const cursor = first.body.next_page_cursor;
    const reordered = await get(sandbox, token, DEPOSIT_ADDRESSES, {
      networks: ["ETHEREUM", "BITCOIN"],
      limit: "5",
      page_cursor: cursor,
    });
    assert.equal(reordered.status, 200, reordered.text);
    assertProblem(
      await get(sandbox, token, DEPOSIT_ADDRESSES, { networks: "BITCOIN", page_cursor: cursor }),
      400,
      /belongs to another listing/,
    );
    assertProblem(
      await get(sandbox, token, DEPOSIT_ADDRESSES, {
        ...params,
        order: "ASC",
        page_cursor: cursor,
      }),
      400,
      /issued for order DESC/,
    );
  });

  it("refuses unknown networks, order_by, order and parameters with 400 naming them", async () => {
    const bad: [Params, RegExp][] = [
      [{ networks: ["BITCOIN", "RIPPLE"] }, /networks entries must be among BITCOIN.*got "RIPPLE"/],
      [{ order_by: "ADDRESS" }, /order_by must be one of CREATED_AT, got "ADDRESS"/],
      [{ order: "sideways" }, /order must be one of DESC, ASC, got "sideways"/],
      [{ profile_id: "dp-0" }, /unknown query parameter "profile_id"/],
      [{ "created_at.gte": "05/05/2024" }, /created_at\.gte must be an RFC 3339/],
    ];
    for (const [params, detail] of bad)
      assertProblem(await get(sandbox, token, DEPOSIT_ADDRESSES, params), 400, detail);
  });
});
