/**
 * Acceptance of the published schema: the sandbox behind Stoplight Prism (proxy mode, the project's
 * `schema/platform-v2.conformance.openapi.json`), every operation exercised with valid and invalid
 * requests; no answer may break the schema, nor any valid request. Filter semantics, across pages.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { type Sandbox, startSandbox } from "../../src/index.ts";
import { CONFORMANCE_SCHEMA_FILE, schemaPath } from "../../src/shared.ts";
import { seedConformanceData } from "../helpers/sandbox-conformance-data.ts";
import { tokenFor } from "../helpers/sandbox-http.ts";
import {
  type ConformanceCheck,
  conformanceCheck,
  type PrismProxy,
  startPrism,
} from "../helpers/sandbox-prism.ts";

const SCHEMA = CONFORMANCE_SCHEMA_FILE;
const P1 = "conformance-p1";
const P2 = "conformance-p2";
const HOUR = 3_600_000;

type Query = [string, string][];

describe("the sandbox against the published schema, behind a validating proxy (Prism)", () => {
  let sandbox: Sandbox;
  let prism: PrismProxy;
  let token: string;
  let check: ConformanceCheck;
  const valid: ConformanceCheck["valid"] = (...args) => check.valid(...args);
  const invalid: ConformanceCheck["invalid"] = (...args) => check.invalid(...args);

  before(async () => {
    sandbox = await startSandbox({
      identities: 1500,
      seed: 21,
      migratedFraction: 0.6,
      rateLimitRps: 0,
      tokenRateLimitRps: 0,
    });
    prism = await startPrism(sandbox.apiUrl, SCHEMA);
    token = await tokenFor(sandbox);
    check = conformanceCheck(prism, token);
    seedConformanceData(sandbox, P1, P2);
  });

  after(async () => {
    await prism?.close();
    await sandbox?.close();
  });

  it("answers every identity read and filter within the schema, and refuses bad filters within it too", async () => {
    const list = "GET /v2/identity/identities";
    const page = await valid(list, "/v2/identity/identities", [["limit", "50"]]);
    const id: string = page.body.items[0].id;
    for (const q of [
      [
        ["order", "ASC"],
        ["order_by", "CREATED_AT"],
        ["limit", "7"],
      ],
      [
        ["control_types", "SELL_ONLY"],
        ["control_types", "FROZEN"],
      ],
      [
        ["control_reason_codes", "COMPLIANCE_INCOMPLETE"],
        ["control_reason_codes", "OTHER"],
      ],
      [
        ["summary_status", "APPROVED"],
        ["identity_type", "INSTITUTION"],
      ],
      [
        ["created_at.gte", "2021-01-01T00:00:00Z"],
        ["created_at.lt", "2021-01-01T00:05:00Z"],
      ],
      [
        ["created_at.eq", "2021-01-01T00:00:01Z"],
        ["created_at.lte", "2030-01-01T00:00:00Z"],
      ],
      [
        ["updated_at.gt", "2020-01-01T00:00:00Z"],
        ["updated_at.lte", "2030-01-01T00:00:00Z"],
      ],
      [
        ["updated_at.eq", "2021-01-01T00:00:00Z"],
        ["created_at.gt", "2020-01-01T00:00:00Z"],
      ],
      [
        ["updated_at.lt", "2030-01-01T00:00:00Z"],
        ["updated_at.gte", "2020-01-01T00:00:00Z"],
      ],
    ] as Query[]) {
      await valid(list, "/v2/identity/identities", q);
    }
    const next = await valid(list, "/v2/identity/identities", [
      ["limit", "50"],
      ["page_cursor", page.body.next_page_cursor],
    ]);
    assert.equal(next.body.items.length, 50);
    await invalid(list, "/v2/identity/identities", { query: [["limit", "abc"]] });
    await invalid(list, "/v2/identity/identities", { query: [["control_types", "QUARANTINED"]] });
    await invalid(list, "/v2/identity/identities", { query: [["order", "SIDEWAYS"]] });
    await invalid(list, "/v2/identity/identities", { token: null });

    const one = "GET /v2/identity/identities/{id}";
    await valid(one, `/v2/identity/identities/${id}`);
    await valid(one, `/v2/identity/identities/${id}`, [["include_details", "true"]]);
    const missing = await valid(one, "/v2/identity/identities/no-such-identity");
    assert.equal(missing.status, 404);
    await invalid(one, `/v2/identity/identities/${id}`, {
      query: [["include_details", "maybe"]],
    });
  });

  it("answers every identity-control operation within the schema, errors included", async () => {
    const list = "GET /v2/identity/controls";
    const create = "POST /v2/identity/controls";
    const remove = "DELETE /v2/identity/controls";
    const ids = (await prism.call("GET", "/v2/identity/identities", { token })).body.items.map(
      (i: { id: string }) => i.id,
    );
    const created: string[] = [];
    for (const [type, reason_code] of [
      ["SELL_ONLY", "OTHER"],
      ["CLOSED", "COMPLIANCE_INCOMPLETE"],
      ["DORMANT", "INACTIVITY"],
    ]) {
      const res = await valid(create, "/v2/identity/controls", [], {
        identity_id: ids[1],
        type,
        reason_code,
        reason: "conformance",
      });
      assert.equal(res.body.set_by, "SET_BY_CLIENT");
      created.push(res.body.id);
    }
    await valid(list, "/v2/identity/controls", [["identity_id", ids[1]]]);
    await valid(list, "/v2/identity/controls", [
      ["identity_id", ids[1]],
      ["include_deleted", "true"],
      ["limit", "2"],
    ]);
    assert.equal(
      (await valid(list, "/v2/identity/controls", [["identity_id", "nobody"]])).status,
      404,
    );
    const del = await valid(remove, "/v2/identity/controls", [
      ["control_id", created[0]!],
      ["reason", "conformance"],
    ]);
    assert.deepEqual(del.body, {});
    assert.equal(
      (await valid(remove, "/v2/identity/controls", [["control_id", created[0]!]])).status,
      409,
    );
    const service = sandbox.addControl(ids[2], { type: "FROZEN", set_by: "SET_BY_SERVICE" });
    assert.equal(
      (await valid(remove, "/v2/identity/controls", [["control_id", service.id]])).status,
      403,
    );
    assert.equal(
      (
        await valid(create, "/v2/identity/controls", [], {
          identity_id: "nobody",
          type: "SELL_ONLY",
          reason_code: "OTHER",
        })
      ).status,
      404,
    );
    await invalid(create, "/v2/identity/controls", {
      body: { identity_id: ids[1], type: "FROZEN", reason_code: "OTHER" },
    });
    await invalid(create, "/v2/identity/controls", {
      body: { identity_id: ids[1], type: "SELL_ONLY" },
    });
    await invalid(list, "/v2/identity/controls", {});
    await invalid(remove, "/v2/identity/controls", { query: [["reason", "no id"]] });
  });

  it("answers the exchange reads within the schema: newer markets as filters, n/a amounts as empty strings, EXPIRED orders", async () => {
    const executions = "GET /v2/profiles/{profile_id}/quote-executions";
    const path = `/v2/profiles/${P1}/quote-executions`;
    const all = await valid(executions, path, [["limit", "100"]]);
    assert.equal(all.body.total_count, 300);
    for (const q of [
      [["market", "PEPEUSD"]],
      [
        ["market", "BTCUSD"],
        ["side", "BUY"],
        ["status", "SETTLED"],
      ],
      [
        ["created_at.begin", "2024-01-01T00:00:00Z"],
        ["created_at.end", "2024-01-01T00:01:00Z"],
      ],
      [
        ["order", "ASC"],
        ["order_by", "CREATED_AT"],
        ["pagination.limit", "10"],
        ["pagination.offset", "20"],
      ],
    ] as Query[]) {
      await valid(executions, path, q);
    }
    await valid(executions, path, [["page_cursor", all.body.next_page_cursor]]);
    assert.equal((await valid(executions, "/v2/profiles/nobody/quote-executions")).status, 404);
    await invalid(executions, path, { query: [["market", "MATICUSD"]] });

    const getOrder = "GET /v2/profiles/{profile_id}/orders/{id}";
    let sawEmptyPrice = false;
    let sawExpired = false;
    for (const seeded of sandbox.seedOrders([
      { profile_id: P1, side: "SELL", market: "DOGEUSD", type: "MARKET", base_amount: "10" },
      {
        profile_id: P1,
        side: "BUY",
        market: "ETHUSD",
        type: "LIMIT",
        price: "2000",
        base_amount: "1",
        time_in_force: "GTT",
        created_at: new Date(Date.now() - 2 * HOUR).toISOString(),
        expiration_date: new Date(Date.now() - HOUR).toISOString(),
      },
    ])) {
      const res = await valid(getOrder, `/v2/profiles/${P1}/orders/${seeded.order.id}`);
      sawEmptyPrice ||= res.body.price === "";
      sawExpired ||= res.body.status === "EXPIRED";
    }
    assert.ok(sawEmptyPrice && sawExpired);
    assert.equal(
      (await valid(getOrder, `/v2/profiles/${P1}/orders/00000000-0000-4000-8000-000000000000`))
        .status,
      404,
    );
  });

  it("answers internal transfers within the schema: 403 insufficient funds with meta, 409 for a reused ref_id", async () => {
    const op = "POST /v2/transfer/internal";
    const body = { from_profile_id: P1, to_profile_id: P2, asset: "BTC", amount: "0.5" };
    const ok = await valid(op, "/v2/transfer/internal", [], { ...body, ref_id: "conf-t1" });
    assert.equal(ok.status, 200);
    const again = await valid(op, "/v2/transfer/internal", [], { ...body, ref_id: "conf-t1" });
    assert.equal(again.status, 409);
    const poor = await valid(op, "/v2/transfer/internal", [], { ...body, amount: "99" });
    assert.equal(poor.status, 403);
    assert.equal(poor.body.meta.available, "1.5");
    assert.equal(
      (await valid(op, "/v2/transfer/internal", [], { ...body, to_profile_id: "nobody" })).status,
      404,
    );
    await invalid(op, "/v2/transfer/internal", { body: { ...body, amount: "-1" } });
    await invalid(op, "/v2/transfer/internal", { body: { ...body, from_profile_id: undefined } });
  });

  it("answers deposit addresses and orchestration-rule deletes within the schema, newer networks included", async () => {
    const addresses = "GET /v2/transfer/deposit-addresses";
    const path = "/v2/transfer/deposit-addresses";
    const first = await valid(addresses, path, [["limit", "25"]]);
    for (const q of [
      [
        ["networks", "BNB"],
        ["networks", "SUI"],
        ["networks", "DOGECOIN"],
      ],
      [
        ["profile_ids", P1],
        ["created_at.gte", "2024-01-01T00:00:00Z"],
        ["order", "ASC"],
      ],
      [
        ["created_at.lt", "2030-01-01T00:00:00Z"],
        ["created_at.eq", "2024-01-01T00:00:00Z"],
      ],
      [
        ["created_at.lte", "2030-01-01T00:00:00Z"],
        ["created_at.gt", "2020-01-01T00:00:00Z"],
      ],
      [
        ["ids", first.body.items[0].id],
        ["ref_ids", "addr-2-0"],
        ["order_by", "CREATED_AT"],
      ],
    ] as Query[]) {
      await valid(addresses, path, q);
    }
    await valid(addresses, path, [
      ["limit", "25"],
      ["page_cursor", first.body.next_page_cursor],
    ]);
    await invalid(addresses, path, { query: [["networks", "RIPPLE"]] });

    const op = "DELETE /v2/orchestration/rules/{id}";
    const [rule] = sandbox.orchestrationRules();
    const deleted = await valid(op, `/v2/orchestration/rules/${rule!.id}`);
    assert.equal(deleted.body.rule.status, "DELETED");
    assert.equal((await valid(op, `/v2/orchestration/rules/${rule!.id}`)).status, 404);
  });

  it("exercised every operation of the schema, and no answer broke it", () => {
    const spec = JSON.parse(readFileSync(schemaPath(SCHEMA), "utf8"));
    const operations: string[] = [];
    for (const [path, item] of Object.entries(spec.paths as Record<string, object>)) {
      for (const method of Object.keys(item)) operations.push(`${method.toUpperCase()} ${path}`);
    }
    assert.equal(operations.length, 10);
    assert.deepEqual([...check.exercised].sort(), operations.sort());
    assert.deepEqual(check.responseViolations, []);
  });
});
