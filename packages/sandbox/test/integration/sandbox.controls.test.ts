import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Sandbox, startSandbox } from "../../src/index.ts";
import {
  assertProblem,
  CONTROLS,
  call,
  createControl,
  IDENTITIES,
  tokenFor,
  walk,
} from "../helpers/sandbox-http.ts";

describe("sandbox identity controls", () => {
  let sandbox: Sandbox;
  let token: string;
  let ids: string[];
  let next = 0;
  /** A fresh identity without controls for each test. */
  const fresh = () => ids[next++]!;

  before(async () => {
    sandbox = await startSandbox({
      identities: 300,
      migratedFraction: 0,
      rateLimitRps: 0,
      tokenRateLimitRps: 0,
    });
    token = await tokenFor(sandbox);
    const page = await call(sandbox, token, "GET", IDENTITIES, { query: { limit: "300" } });
    ids = page.body.items.map((i: { id: string }) => i.id);
  });
  after(() => sandbox.close());

  it("creates a client control with set_by CLIENT and is_overridable true, and lists it", async () => {
    const id = fresh();
    const res = await call(sandbox, token, "POST", CONTROLS, {
      body: {
        identity_id: id,
        type: "SELL_ONLY",
        reason_code: "END_USER_REQUEST",
        reason: "asked",
      },
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.type, "SELL_ONLY");
    assert.equal(res.body.set_by, "SET_BY_CLIENT");
    assert.equal(res.body.is_overridable, true);
    assert.equal(res.body.reason_code, "END_USER_REQUEST");
    assert.equal(res.body.reason, "asked");
    assert.ok(!Number.isNaN(Date.parse(res.body.created_at)));
    assert.equal("deleted_at" in res.body, false, "deleted_at is omitted while active");
    const list = await call(sandbox, token, "GET", CONTROLS, { query: { identity_id: id } });
    assert.deepEqual(list.body, { items: [res.body], next_page_cursor: "" });
    assert.deepEqual(sandbox.controlsOf(id), [res.body]);
  });

  it("refuses a FROZEN create with 400 and creates nothing", async () => {
    const id = fresh();
    const res = await call(sandbox, token, "POST", CONTROLS, {
      body: { identity_id: id, type: "FROZEN", reason_code: "OTHER" },
    });
    assertProblem(res, 400, /FROZEN/);
    assert.deepEqual(sandbox.controlsOf(id, { includeDeleted: true }), []);
  });

  it("refuses an unknown type, a missing or unknown reason_code, a missing identity_id and a bad body with 400", async () => {
    const id = fresh();
    const cases: [unknown, RegExp][] = [
      [
        { identity_id: id, type: "LOCKED", reason_code: "OTHER" },
        /type must be one of SELL_ONLY, DORMANT, CLOSED, got "LOCKED"/,
      ],
      [{ identity_id: id, reason_code: "OTHER" }, /type is required/],
      [{ identity_id: id, type: "SELL_ONLY" }, /reason_code is required/],
      [
        { identity_id: id, type: "SELL_ONLY", reason_code: "BECAUSE" },
        /reason_code must be one of .*"BECAUSE"/,
      ],
      [{ type: "SELL_ONLY", reason_code: "OTHER" }, /identity_id is required/],
      [{ identity_id: 7, type: "SELL_ONLY", reason_code: "OTHER" }, /identity_id must be a string/],
      [
        { identity_id: id, type: "SELL_ONLY", reason_code: "OTHER", reason: 5 },
        /reason must be a string/,
      ],
      [[1, 2], /body must be a JSON object/],
      ["text", /body must be a JSON object/],
    ];
    for (const [body, detail] of cases) {
      assertProblem(await call(sandbox, token, "POST", CONTROLS, { body }), 400, detail);
    }
    assertProblem(
      await call(sandbox, token, "POST", CONTROLS, { rawBody: '{"identity_id": ' }),
      400,
      /not valid JSON/,
    );
    assertProblem(
      await call(sandbox, token, "POST", CONTROLS, { rawBody: "" }),
      400,
      /JSON object/,
    );
    assert.deepEqual(sandbox.controlsOf(id, { includeDeleted: true }), []);
  });

  it("answers 404 for an unknown identity on create and on list, and 400 when identity_id is missing", async () => {
    assertProblem(
      await call(sandbox, token, "POST", CONTROLS, {
        body: { identity_id: "nobody", type: "SELL_ONLY", reason_code: "OTHER" },
      }),
      404,
      /identity nobody not found/,
    );
    assertProblem(
      await call(sandbox, token, "GET", CONTROLS, { query: { identity_id: "nobody" } }),
      404,
    );
    assertProblem(await call(sandbox, token, "GET", CONTROLS), 400, /identity_id is required/);
    assertProblem(
      await call(sandbox, token, "GET", CONTROLS, {
        query: { identity_id: fresh(), include_deleted: "maybe" },
      }),
      400,
      /include_deleted must be true or false/,
    );
  });

  it("deletes an overridable control: answers {}, sets deleted_at, and hides it unless include_deleted", async () => {
    const id = fresh();
    const c = await createControl(sandbox, token, id);
    const del = await call(sandbox, token, "DELETE", CONTROLS, {
      query: { control_id: c.id, reason: "done" },
    });
    assert.equal(del.status, 200);
    assert.deepEqual(del.body, {});
    const active = await call(sandbox, token, "GET", CONTROLS, { query: { identity_id: id } });
    assert.deepEqual(active.body.items, []);
    const all = await call(sandbox, token, "GET", CONTROLS, {
      query: { identity_id: id, include_deleted: "true" },
    });
    assert.equal(all.body.items.length, 1);
    assert.ok(!Number.isNaN(Date.parse(all.body.items[0].deleted_at)));
    assert.equal(sandbox.stats().writes.deletes >= 1, true);
  });

  it("refuses a second delete of the same control with 409 and an unknown control with 404", async () => {
    const c = await createControl(sandbox, token, fresh());
    assert.equal(
      (await call(sandbox, token, "DELETE", CONTROLS, { query: { control_id: c.id } })).status,
      200,
    );
    assertProblem(
      await call(sandbox, token, "DELETE", CONTROLS, { query: { control_id: c.id } }),
      409,
      /already deleted/,
    );
    assertProblem(
      await call(sandbox, token, "DELETE", CONTROLS, { query: { control_id: "nope" } }),
      404,
    );
    assertProblem(await call(sandbox, token, "DELETE", CONTROLS), 400, /control_id is required/);
  });

  it("refuses to delete a non-overridable control with 403 and leaves it unchanged", async () => {
    const id = fresh();
    const service = sandbox.addControl(id, { type: "SELL_ONLY", set_by: "SERVICE" });
    assert.equal(service.is_overridable, false);
    const res = await call(sandbox, token, "DELETE", CONTROLS, {
      query: { control_id: service.id },
    });
    assertProblem(res, 403, /not overridable/);
    assert.deepEqual(sandbox.controlsOf(id, { includeDeleted: true }), [service]);
  });

  it("allows a second active control of the same type under the allow policy and counts the duplicate", async () => {
    const id = fresh();
    const before = sandbox.stats().integrity;
    await createControl(sandbox, token, id);
    await createControl(sandbox, token, id);
    assert.equal(sandbox.controlsOf(id).length, 2);
    const integrity = sandbox.stats().integrity;
    assert.equal(
      integrity.identitiesWithDuplicateClientSellOnly,
      before.identitiesWithDuplicateClientSellOnly + 1,
    );
    assert.equal(
      integrity.duplicateClientSellOnlyControls,
      before.duplicateClientSellOnlyControls + 1,
    );
    assert.equal(integrity.activeClientSellOnly, before.activeClientSellOnly + 2);
  });

  it("refuses a second active control of the same type with 409 under the reject policy", async () => {
    const id = fresh();
    sandbox.setLimits({ duplicatePolicy: "reject" });
    try {
      const first = await createControl(sandbox, token, id);
      const res = await call(sandbox, token, "POST", CONTROLS, {
        body: { identity_id: id, type: "SELL_ONLY", reason_code: "OTHER" },
      });
      assertProblem(res, 409, /already has an active SELL_ONLY/);
      await createControl(sandbox, token, id, "CLOSED");
      // Once the first is deleted, a new one of that type is accepted again.
      await call(sandbox, token, "DELETE", CONTROLS, { query: { control_id: first.id } });
      await createControl(sandbox, token, id);
      assert.equal(sandbox.controlsOf(id).length, 2);
    } finally {
      sandbox.setLimits({ duplicatePolicy: "allow" });
    }
  });

  it("walks many controls of one identity with a small limit, losing and repeating none, with and without deleted", async () => {
    const id = fresh();
    const created: string[] = [];
    for (let i = 0; i < 60; i++)
      created.push((await createControl(sandbox, token, id, i % 2 ? "CLOSED" : "SELL_ONLY")).id);
    const deleted = new Set(created.filter((_, i) => i % 3 === 0));
    for (const cid of deleted)
      await call(sandbox, token, "DELETE", CONTROLS, { query: { control_id: cid } });

    const all = await walk(sandbox, token, CONTROLS, {
      identity_id: id,
      include_deleted: "true",
      limit: "7",
    });
    assert.deepEqual(
      all.map((c) => c.id),
      created,
    );
    const active = await walk(sandbox, token, CONTROLS, { identity_id: id, limit: "7" });
    assert.deepEqual(
      active.map((c) => c.id),
      created.filter((c) => !deleted.has(c)),
    );

    // Controls created during a walk appear at its end; none repeats.
    const extra: string[] = [];
    const during = await walk(
      sandbox,
      token,
      CONTROLS,
      { identity_id: id, limit: "9" },
      async (page) => {
        if (page < 3) extra.push((await createControl(sandbox, token, id)).id);
      },
    );
    assert.deepEqual(
      during.map((c) => c.id),
      [...created.filter((c) => !deleted.has(c)), ...extra],
    );
  });

  it("refuses a controls cursor used for another identity, another include_deleted, or edited", async () => {
    const id = fresh();
    for (let i = 0; i < 3; i++) await createControl(sandbox, token, id);
    const first = await call(sandbox, token, "GET", CONTROLS, {
      query: { identity_id: id, limit: "1" },
    });
    const cursor = first.body.next_page_cursor;
    assert.notEqual(cursor, "");
    assertProblem(
      await call(sandbox, token, "GET", CONTROLS, {
        query: { identity_id: fresh(), page_cursor: cursor },
      }),
      400,
      /another listing/,
    );
    assertProblem(
      await call(sandbox, token, "GET", CONTROLS, {
        query: { identity_id: id, include_deleted: "true", page_cursor: cursor },
      }),
      400,
      /another listing/,
    );
    assertProblem(
      await call(sandbox, token, "GET", CONTROLS, {
        query: { identity_id: id, page_cursor: `x${cursor}` },
      }),
      400,
      /page_cursor/,
    );
    assertProblem(
      await call(sandbox, token, "GET", CONTROLS, { query: { identity_id: id, limit: "1001" } }),
      400,
      /limit must be an integer between 1 and 1000, got 1001/,
    );
  });
});
