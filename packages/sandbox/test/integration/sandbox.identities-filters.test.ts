/**
 * The published filters of GET /v2/identity/identities, over real HTTP: each filter returns
 * exactly the matching identities (none more, none missing) across pages, stays consistent while
 * controls change during a walk, and binds its page_cursor.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  type ControlRecord,
  type Sandbox,
  type SeedIdentity,
  startSandbox,
} from "../../src/index.ts";
import {
  assertProblem,
  CONTROLS,
  call,
  createControl,
  IDENTITIES,
  tokenFor,
  walkRepeated,
} from "../helpers/sandbox-http.ts";

const COUNT = 3000;

type Item = {
  id: string;
  created_at: string;
  updated_at: string;
  summary_status: string;
  type: string;
  status_details: { active_controls: ControlRecord[] };
};

const ids = (items: readonly { id: string }[]) => items.map((i) => i.id);

describe("sandbox identities listing filters", () => {
  let sandbox: Sandbox;
  let token: string;
  /** Every identity in ASC keyset order, as the unfiltered listing returns it. */
  let all: Item[];
  const active = (id: string) => sandbox.controlsOf(id);
  const holding = (pred: (c: ControlRecord) => boolean) =>
    all.filter((i) => active(i.id).some(pred)).map((i) => i.id);

  before(async () => {
    sandbox = await startSandbox({
      identities: COUNT,
      seed: 9,
      migratedFraction: 0.5,
      driftFraction: 0.3,
      rateLimitRps: 0,
      tokenRateLimitRps: 0,
    });
    token = await tokenFor(sandbox);
    all = (
      await walkRepeated<Item>(sandbox, token, [
        ["limit", "1000"],
        ["order", "ASC"],
      ])
    ).items;
    assert.equal(all.length, COUNT);
  });
  after(() => sandbox.close());

  it("control_types=SELL_ONLY returns exactly the identities with an active SELL_ONLY, across pages, in both orders", async () => {
    const expected = holding((c) => c.type === "SELL_ONLY");
    assert.ok(expected.length > 200 && expected.length < COUNT / 2, `${expected.length}`);
    const asc = await walkRepeated<Item>(sandbox, token, [
      ["control_types", "SELL_ONLY"],
      ["limit", "97"],
      ["order", "ASC"],
    ]);
    assert.deepEqual(ids(asc.items), expected);
    assert.equal(asc.pages, Math.ceil(expected.length / 97));
    const desc = await walkRepeated<Item>(sandbox, token, [["control_types", "SELL_ONLY"]]);
    assert.deepEqual(ids(desc.items), [...expected].reverse());
    for (const item of asc.items) {
      assert.ok(item.status_details.active_controls.some((c) => c.type === "SELL_ONLY"));
    }
  });

  it("repeated control_types return the union, each identity once, in keyset order", async () => {
    // An identity holding both types would be listed twice by a naive union.
    const one = all[0]!.id;
    sandbox.addControl(one, { type: "CLOSED" });
    sandbox.addControl(one, { type: "FROZEN", set_by: "SET_BY_SERVICE" });
    const expected = holding((c) => c.type === "FROZEN" || c.type === "CLOSED");
    assert.ok(expected.includes(one));
    const got = await walkRepeated<Item>(sandbox, token, [
      ["control_types", "FROZEN"],
      ["control_types", "CLOSED"],
      ["limit", "50"],
      ["order", "ASC"],
    ]);
    assert.deepEqual(ids(got.items), expected);
  });

  it("follows controls created and deleted during a walk: identities ahead of the cursor appear or vanish, none repeat", async () => {
    const expectedBefore = holding((c) => c.type === "DORMANT");
    const tail = all.slice(-400);
    const gainer = tail.find((i) => !active(i.id).some((c) => c.type === "DORMANT"));
    const loserControl = tail
      .flatMap((i) => active(i.id).filter((c) => c.type === "DORMANT" && c.is_overridable))
      .at(0);
    assert.ok(gainer, "the seed has an identity without DORMANT near the end");
    assert.ok(loserControl, "the seed has an overridable DORMANT control near the end");
    let loser: string | undefined;
    const got = await walkRepeated<Item>(
      sandbox,
      token,
      [
        ["control_types", "DORMANT"],
        ["limit", "5"],
        ["order", "ASC"],
      ],
      async (page) => {
        if (page !== 1) return;
        await createControl(sandbox, token, gainer.id, "DORMANT");
        loser = all.find((i) => active(i.id).some((c) => c.id === loserControl.id))?.id;
        const del = await call(sandbox, token, "DELETE", CONTROLS, {
          query: { control_id: loserControl.id },
        });
        assert.equal(del.status, 200);
      },
    );
    const seen = ids(got.items);
    assert.equal(new Set(seen).size, seen.length, "no identity repeated");
    assert.ok(
      seen.includes(gainer.id),
      "an identity ahead of the cursor that gained a DORMANT is listed",
    );
    assert.ok(loser, "the deleted DORMANT control belonged to a known identity");
    assert.ok(!seen.includes(loser), "an identity that lost its only DORMANT is not");
    const expected = expectedBefore.filter((id) => id !== loser).concat(gainer.id);
    assert.deepEqual(
      [...seen].sort(),
      [...new Set(expected)].sort(),
      "every other identity with a DORMANT is listed",
    );
  });

  it("control_reason_codes returns identities with an active control of a listed reason, and with control_types one control must match both", async () => {
    const byReason = holding((c) => c.reason_code === "ADMINISTRATIVE");
    const got = await walkRepeated<Item>(sandbox, token, [
      ["control_reason_codes", "ADMINISTRATIVE"],
      ["order", "ASC"],
      ["limit", "200"],
    ]);
    assert.deepEqual(ids(got.items), byReason);
    const sameControl = holding((c) => c.type === "FROZEN" && c.reason_code === "ADMINISTRATIVE");
    const frozenAdmin = await walkRepeated<Item>(sandbox, token, [
      ["control_types", "FROZEN"],
      ["control_reason_codes", "ADMINISTRATIVE"],
      ["order", "ASC"],
    ]);
    assert.deepEqual(ids(frozenAdmin.items), sameControl);
    const sellAdmin = holding((c) => c.type === "SELL_ONLY" && c.reason_code === "ADMINISTRATIVE");
    assert.ok(sellAdmin.length > 0);
    const both = await walkRepeated<Item>(sandbox, token, [
      ["control_types", "SELL_ONLY"],
      ["control_reason_codes", "ADMINISTRATIVE"],
      ["order", "ASC"],
    ]);
    assert.deepEqual(ids(both.items), sellAdmin);
  });

  it("summary_status and identity_type filter on the identity's own fields, alone and with control_types", async () => {
    const approvedInstitutions = all.filter(
      (i) => i.summary_status === "APPROVED" && i.type === "INSTITUTION",
    );
    assert.ok(approvedInstitutions.length > 50, `${approvedInstitutions.length}`);
    const got = await walkRepeated<Item>(sandbox, token, [
      ["summary_status", "APPROVED"],
      ["identity_type", "INSTITUTION"],
      ["order", "ASC"],
      ["limit", "100"],
    ]);
    assert.deepEqual(ids(got.items), ids(approvedInstitutions));
    const sellOnly = new Set(holding((c) => c.type === "SELL_ONLY"));
    const pending = await walkRepeated<Item>(sandbox, token, [
      ["summary_status", "PENDING"],
      ["control_types", "SELL_ONLY"],
      ["order", "ASC"],
    ]);
    assert.deepEqual(
      ids(pending.items),
      all.filter((i) => i.summary_status === "PENDING" && sellOnly.has(i.id)).map((i) => i.id),
    );
  });

  it("created_at bounds are exact: lt excludes and lte includes a tie, eq takes only equal instants, across pages", async () => {
    const pivot = all[1000]!.created_at;
    const at = (pred: (t: number) => boolean) =>
      ids(all.filter((i) => pred(Date.parse(i.created_at))));
    const p = Date.parse(pivot);
    for (const [param, pred] of [
      ["created_at.lt", (t: number) => t < p],
      ["created_at.lte", (t: number) => t <= p],
      ["created_at.gt", (t: number) => t > p],
      ["created_at.gte", (t: number) => t >= p],
      ["created_at.eq", (t: number) => t === p],
    ] as const) {
      const got = await walkRepeated<Item>(sandbox, token, [
        [param, pivot],
        ["order", "ASC"],
        ["limit", "333"],
      ]);
      assert.deepEqual(ids(got.items), at(pred), param);
    }
    // Synthetic identities share created_at in pairs: eq returns both.
    const eq = await walkRepeated<Item>(sandbox, token, [["created_at.eq", pivot]]);
    assert.equal(eq.items.length, 2);
    // Two bounds make a window; the same window with control_types narrows the SELL_ONLY set.
    const from = all[500]!.created_at;
    const to = all[2500]!.created_at;
    const windowed = await walkRepeated<Item>(sandbox, token, [
      ["control_types", "SELL_ONLY"],
      ["created_at.gte", from],
      ["created_at.lt", to],
      ["limit", "40"],
    ]);
    const sellOnly = new Set(holding((c) => c.type === "SELL_ONLY"));
    const expected = all
      .filter(
        (i) =>
          sellOnly.has(i.id) &&
          Date.parse(i.created_at) >= Date.parse(from) &&
          Date.parse(i.created_at) < Date.parse(to),
      )
      .map((i) => i.id)
      .reverse();
    assert.deepEqual(ids(windowed.items), expected);
  });

  it("updated_at moves when a control is created or deleted through the API, and updated_at filters select on it", async () => {
    const target = all[42]!;
    assert.equal(target.updated_at, target.created_at, "never changed: updated_at is created_at");
    const since = new Date().toISOString();
    await createControl(sandbox, token, target.id, "CLOSED");
    const one = await call(sandbox, token, "GET", `${IDENTITIES}/${target.id}`);
    assert.ok(Date.parse(one.body.updated_at) >= Date.parse(since));
    const changed = await walkRepeated<Item>(sandbox, token, [["updated_at.gte", since]]);
    assert.ok(ids(changed.items).includes(target.id));
    assert.ok(changed.items.every((i) => Date.parse(i.updated_at) >= Date.parse(since)));
    const old = await walkRepeated<Item>(sandbox, token, [
      ["updated_at.lt", since],
      ["limit", "1000"],
    ]);
    assert.ok(!ids(old.items).includes(target.id));
    assert.equal(old.items.length + changed.items.length, COUNT);
  });

  it("binds a page_cursor to its filters: replayed with other filters it is a 400, with another limit it goes on", async () => {
    const first = await call(sandbox, token, "GET", IDENTITIES, {
      query: { control_types: "SELL_ONLY", limit: "10" },
    });
    const cursor = first.body.next_page_cursor;
    assert.notEqual(cursor, "");
    const others: Record<string, string>[] = [
      {},
      { control_types: "FROZEN" },
      { control_types: "SELL_ONLY", summary_status: "APPROVED" },
      { control_types: "SELL_ONLY", "created_at.gte": "2021-01-01T00:00:00Z" },
    ];
    for (const other of others) {
      assertProblem(
        await call(sandbox, token, "GET", IDENTITIES, {
          query: { ...other, page_cursor: cursor },
        }),
        400,
        /page_cursor belongs to another listing/,
      );
    }
    const next = await call(sandbox, token, "GET", IDENTITIES, {
      query: { control_types: "SELL_ONLY", limit: "20", page_cursor: cursor },
    });
    assert.equal(next.status, 200);
    assert.equal(next.body.items.length, 20);
    assert.ok(!ids(next.body.items).some((id) => ids(first.body.items).includes(id)));
  });

  it("refuses unknown parameters, values outside the published enums, a second order_by and bad instants with a 400 naming them", async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ control_type: "SELL_ONLY" }, /unknown query parameter "control_type"/],
      [{ control_types: "QUARANTINED" }, /control_types entries must be among SELL_ONLY/],
      [{ control_reason_codes: "BORED" }, /control_reason_codes entries must be among/],
      [{ summary_status: "HAPPY" }, /summary_status must be one of PENDING/],
      [{ identity_type: "ROBOT" }, /identity_type must be one of PERSON, INSTITUTION/],
      [{ order_by: "ID" }, /order_by must be one of CREATED_AT, got "ID"/],
      [{ "created_at.gte": "yesterday" }, /created_at.gte must be an RFC 3339 date-time/],
      [{ "updated_at.lt": "2024-02-30T00:00:00Z" }, /updated_at.lt must be an RFC 3339/],
    ];
    for (const [query, detail] of cases) {
      assertProblem(await call(sandbox, token, "GET", IDENTITIES, { query }), 400, detail);
    }
  });

  it("accepts reason_code COMPLIANCE_INCOMPLETE and the preview's ONBOARDING_INCOMPLETE, stored and filtered as COMPLIANCE_INCOMPLETE", async () => {
    const [a, b] = [all[10]!.id, all[11]!.id];
    for (const [id, reason_code] of [
      [a, "COMPLIANCE_INCOMPLETE"],
      [b, "ONBOARDING_INCOMPLETE"],
    ]) {
      const res = await call(sandbox, token, "POST", CONTROLS, {
        body: { identity_id: id, type: "DORMANT", reason_code },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.reason_code, "COMPLIANCE_INCOMPLETE");
    }
    for (const name of ["COMPLIANCE_INCOMPLETE", "ONBOARDING_INCOMPLETE"]) {
      const got = await walkRepeated<Item>(sandbox, token, [["control_reason_codes", name]]);
      assert.deepEqual(ids(got.items).sort(), [a, b].sort(), name);
    }
  });

  it("seeds summary_status, type and updated_at as given and answers them", async () => {
    const row: SeedIdentity = {
      id: "seeded-with-fields",
      user_disabled: false,
      admin_disabled: true,
      created_at: "2020-06-01T00:00:00Z",
      updated_at: "2020-07-01T00:00:00Z",
      summary_status: "DENIED",
      type: "INSTITUTION",
    };
    sandbox.seedIdentities([row], { migratedFraction: 0 });
    const res = await call(sandbox, token, "GET", `${IDENTITIES}/${row.id}`);
    assert.equal(res.body.summary_status, "DENIED");
    assert.equal(res.body.type, "INSTITUTION");
    assert.equal(res.body.created_at, "2020-06-01T00:00:00.000Z");
    assert.equal(res.body.updated_at, "2020-07-01T00:00:00.000Z");
    assert.throws(
      () =>
        sandbox.seedIdentities([{ ...row, id: "bad-status", summary_status: "HAPPY" as never }]),
      /identities\[0\]\.summary_status must be one of PENDING/,
    );
  });
});
