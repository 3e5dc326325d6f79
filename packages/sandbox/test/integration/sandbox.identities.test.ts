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

const COUNT = 2500;

// biome-ignore lint/suspicious/noExplicitAny: wire items
function assertSorted(items: any[], order: "ASC" | "DESC"): void {
  for (let i = 1; i < items.length; i++) {
    const a = items[i - 1];
    const b = items[i];
    const cmp =
      a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1;
    assert.equal(cmp, order === "ASC" ? -1 : 1, `items ${i - 1} and ${i} out of ${order} order`);
  }
}

describe("sandbox identities listing", () => {
  let sandbox: Sandbox;
  let token: string;

  before(async () => {
    sandbox = await startSandbox({
      identities: COUNT,
      seed: 3,
      rateLimitRps: 0,
      tokenRateLimitRps: 0,
    });
    token = await tokenFor(sandbox);
  });
  after(() => sandbox.close());

  it("walks every identity exactly once in ASC order of (created_at, id)", async () => {
    const items = await walk(sandbox, token, IDENTITIES, { limit: "97", order: "ASC" });
    assert.equal(items.length, COUNT);
    assert.equal(new Set(items.map((i) => i.id)).size, COUNT);
    assertSorted(items, "ASC");
    // Synthetic identities share created_at in pairs, so the id tie-break is exercised.
    assert.equal(items[0].created_at, items[1].created_at);
  });

  it("walks every identity exactly once in DESC order, the exact reverse of ASC", async () => {
    const asc = await walk(sandbox, token, IDENTITIES, { limit: "1000", order: "ASC" });
    const desc = await walk(sandbox, token, IDENTITIES, { limit: "89", order: "DESC" });
    assert.equal(desc.length, COUNT);
    assertSorted(desc, "DESC");
    assert.deepEqual(
      desc.map((i) => i.id),
      asc.map((i) => i.id).reverse(),
    );
  });

  it("lists newest first (DESC) when no order is given, as published", async () => {
    const asc = await walk(sandbox, token, IDENTITIES, { limit: "1000", order: "ASC" });
    const byDefault = await walk(sandbox, token, IDENTITIES, { limit: "1000" });
    assertSorted(byDefault, "DESC");
    assert.deepEqual(
      byDefault.map((i) => i.id),
      asc.map((i) => i.id).reverse(),
    );
  });

  it("serves 100 identities per page by default and 1000 at most", async () => {
    const def = await call(sandbox, token, "GET", IDENTITIES);
    assert.equal(def.body.items.length, 100);
    assert.notEqual(def.body.next_page_cursor, "");
    const max = await call(sandbox, token, "GET", IDENTITIES, { query: { limit: "1000" } });
    assert.equal(max.body.items.length, 1000);
  });

  it("refuses a limit that is not an integer between 1 and 1000 with a 400 naming it", async () => {
    for (const limit of ["0", "1001", "5000", "-1", "1.5", "abc", "", "1e3"]) {
      const res = await call(sandbox, token, "GET", IDENTITIES, { query: { limit } });
      assertProblem(res, 400, /limit must be an integer between 1 and 1000, got /);
    }
    const res = await call(sandbox, token, "GET", IDENTITIES, { query: { limit: "5000" } });
    assert.equal(res.body.detail, "limit must be an integer between 1 and 1000, got 5000");
  });

  it("refuses an edited, truncated, forged or garbage cursor with 400", async () => {
    const first = await call(sandbox, token, "GET", IDENTITIES, { query: { limit: "10" } });
    const cursor: string = first.body.next_page_cursor;
    const [body, mac] = cursor.split(".") as [string, string];
    const decoded = JSON.parse(Buffer.from(body, "base64url").toString());
    const edited = Buffer.from(JSON.stringify({ ...decoded, t: decoded.t - 1 })).toString(
      "base64url",
    );
    const flip = (s: string) => (s[0] === "A" ? "B" : "A") + s.slice(1);
    for (const bad of [
      `${edited}.${mac}`,
      `${body}.${flip(mac)}`,
      cursor.slice(0, -2),
      body,
      "garbage",
      ".",
      `${flip(body)}.${mac}`,
    ]) {
      const res = await call(sandbox, token, "GET", IDENTITIES, { query: { page_cursor: bad } });
      assertProblem(res, 400, /page_cursor/);
    }
  });

  it("refuses a cursor used with the opposite order or on the controls listing", async () => {
    const first = await call(sandbox, token, "GET", IDENTITIES, {
      query: { limit: "10", order: "ASC" },
    });
    const cursor = first.body.next_page_cursor;
    assertProblem(
      await call(sandbox, token, "GET", IDENTITIES, {
        query: { page_cursor: cursor, order: "DESC" },
      }),
      400,
      /order ASC/,
    );
    assertProblem(
      await call(sandbox, token, "GET", CONTROLS, {
        query: { identity_id: first.body.items[0].id, page_cursor: cursor },
      }),
      400,
      /page_cursor/,
    );
    assertProblem(
      await call(sandbox, token, "GET", IDENTITIES, { query: { order: "UP" } }),
      400,
      /order/,
    );
  });

  it("neither loses nor repeats identities when others are inserted on both sides of the cursor during a walk", async () => {
    const before = await walk(sandbox, token, IDENTITIES, { limit: "1000", order: "ASC" });
    const inserted: string[] = [];
    const asc = { limit: "250", order: "ASC" };
    const seen = await walk(sandbox, token, IDENTITIES, asc, (page, items) => {
      const last = items[items.length - 1];
      const early = `0000-early-${page}`;
      const late = `ffff-late-${page}`;
      sandbox.seedIdentities(
        [
          {
            id: early,
            user_disabled: false,
            admin_disabled: false,
            created_at: "2020-01-01T00:00:00Z",
          },
          { id: late, user_disabled: true, admin_disabled: false, created_at: last.created_at },
          { id: `${late}-now`, user_disabled: false, admin_disabled: false },
        ],
        { migratedFraction: 0 },
      );
      inserted.push(early, late, `${late}-now`);
    });
    const ids = seen.map((i) => i.id);
    assert.equal(new Set(ids).size, ids.length, "no identity repeated");
    for (const i of before) assert.ok(ids.includes(i.id), `identity ${i.id} lost`);
    // Inserted behind the cursor: never seen. Ahead of it: seen.
    assert.ok(!ids.some((id) => id.startsWith("0000-early-")));
    const ahead = inserted.filter((id) => id.endsWith("-now"));
    assert.ok(ahead.length > 0, "identities were inserted ahead of the cursor");
    assert.ok(ahead.every((id) => ids.includes(id)));
    assertSorted(seen, "ASC");
  });

  it("returns one identity by id with its flags and full active controls, and 404 for an unknown id", async () => {
    const [first] = (await call(sandbox, token, "GET", IDENTITIES, { query: { limit: "1" } })).body
      .items;
    const control = sandbox.addControl(first.id, { type: "CLOSED", set_by: "SET_BY_SERVICE" });
    const res = await call(sandbox, token, "GET", `${IDENTITIES}/${first.id}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.id, first.id);
    assert.equal(res.body.created_at, first.created_at);
    assert.equal(typeof res.body.user_disabled, "boolean");
    assert.equal(typeof res.body.admin_disabled, "boolean");
    assert.deepEqual(res.body.status_details.active_controls.at(-1), control);
    assertProblem(
      await call(sandbox, token, "GET", `${IDENTITIES}/no-such-id`),
      404,
      /no-such-id not found/,
    );
  });

  it("shows a control created or deleted through the API at once in active_controls", async () => {
    const [, second] = (await call(sandbox, token, "GET", IDENTITIES, { query: { limit: "2" } }))
      .body.items;
    const created = await createControl(sandbox, token, second.id, "DORMANT");
    const listed = (await call(sandbox, token, "GET", IDENTITIES, { query: { limit: "2" } })).body
      .items[1];
    assert.ok(
      listed.status_details.active_controls.some((c: { id: string }) => c.id === created.id),
    );
    const del = await call(sandbox, token, "DELETE", CONTROLS, {
      query: { control_id: created.id },
    });
    assert.equal(del.status, 200);
    const one = await call(sandbox, token, "GET", `${IDENTITIES}/${second.id}`);
    assert.ok(
      !one.body.status_details.active_controls.some((c: { id: string }) => c.id === created.id),
    );
  });
});
