/**
 * Contract tests: the sandbox's answers validated against the project's copy of the published
 * identity-controls schema (`schema/identity-controls.openapi.json`, see schema/README.md). If that
 * file is missing, every test here fails; it is never skipped.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { Ajv, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { type Sandbox, startSandbox } from "../../src/index.ts";
import { schemaPath } from "../../src/shared.ts";
import {
  type Answer,
  CONTROLS,
  call,
  IDENTITIES,
  read,
  requestToken,
  tokenFor,
} from "../helpers/sandbox-http.ts";

const SPEC_URL = schemaPath("identity-controls.openapi.json");

// biome-ignore lint/suspicious/noExplicitAny: a parsed OpenAPI document
type Json = any;

/**
 * Compiles the reference component schemas with two deliberate changes:
 * - `IdentityControlSetBy` also accepts CLIENT and SERVICE. The platform's seed data (and so the
 *   sandbox's auto-migrated controls) spells set_by that way while the published schema says
 *   SET_BY_CLIENT / SET_BY_SERVICE; the reference README says a client must accept both.
 * - The object schemas get `additionalProperties: false`, so an undocumented field in an answer
 *   fails the test instead of passing unnoticed.
 */
function compileSchemas(): (name: string) => ValidateFunction {
  const spec: Json = JSON.parse(readFileSync(SPEC_URL, "utf8"));
  // Moved under $defs so the compiled document is a plain JSON Schema; refs follow.
  const schemas: Json = JSON.parse(
    JSON.stringify(spec.components.schemas).replaceAll("#/components/schemas/", "#/$defs/"),
  );
  schemas.IdentityControlSetBy.enum.push("CLIENT", "SERVICE");
  for (const name of [
    "IdentityControl",
    "ListIdentityControlsResponse",
    "DeleteIdentityControlResponse",
  ]) {
    schemas[name].additionalProperties = false;
  }
  const ajv = new Ajv({ strict: true, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: "reference", $defs: schemas });
  return (name) => {
    const v = ajv.getSchema(`reference#/$defs/${name}`);
    assert.ok(v, `schema ${name} is in the reference`);
    return v;
  };
}

function assertValid(validate: ValidateFunction, value: unknown, what: string): void {
  const ok = validate(value);
  assert.ok(
    ok,
    `${what} violates the schema: ${JSON.stringify(validate.errors)}\n${JSON.stringify(value)}`,
  );
}

const problemSchema = {
  type: "object",
  properties: {
    type: { type: "string", minLength: 1 },
    title: { type: "string", minLength: 1 },
    status: { type: "integer", minimum: 400, maximum: 599 },
    detail: { type: "string", minLength: 1 },
  },
  required: ["type", "title", "status", "detail"],
  additionalProperties: false,
} as const;

describe("sandbox answers against the reference schema", () => {
  let schema: (name: string) => ValidateFunction;
  let sandbox: Sandbox;
  let token: string;
  let ids: string[];

  before(async () => {
    schema = compileSchemas();
    sandbox = await startSandbox({
      identities: 200,
      driftFraction: 0,
      rateLimitRps: 0,
      tokenRateLimitRps: 0,
    });
    token = await tokenFor(sandbox);
    ids = (
      await call(sandbox, token, "GET", IDENTITIES, { query: { limit: "200" } })
    ).body.items.map((i: { id: string }) => i.id);
  });
  after(() => sandbox.close());

  it("answers create with an IdentityControl, for requests that match CreateIdentityControlRequest", async () => {
    for (const type of ["SELL_ONLY", "CLOSED", "DORMANT"]) {
      const body = { identity_id: ids[0], type, reason_code: "COMPLIANCE_KYC", reason: "contract" };
      assertValid(schema("CreateIdentityControlRequest"), body, "request");
      const res = await call(sandbox, token, "POST", CONTROLS, { body });
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
      assertValid(schema("IdentityControl"), res.body, "create answer");
    }
  });

  it("answers list, paginated, with and without deleted controls, with ListIdentityControlsResponse", async () => {
    const id = ids[1]!;
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await call(sandbox, token, "POST", CONTROLS, {
        body: { identity_id: id, type: "SELL_ONLY", reason_code: "OTHER" },
      });
      made.push(r.body.id);
    }
    sandbox.addControl(id, {
      type: "FROZEN",
      set_by: "SET_BY_SERVICE",
      reason_code: "LEGAL_ORDER",
    });
    sandbox.addControl(id, { type: "SELL_ONLY", set_by: "SERVICE" });
    sandbox.addControl(id, { type: "CLOSED", set_by: "SET_BY_CLIENT", deleted: true });
    await call(sandbox, token, "DELETE", CONTROLS, { query: { control_id: made[0]! } });
    for (const includeDeleted of [true, false]) {
      const expected = sandbox.controlsOf(id, { includeDeleted });
      const seen: string[] = [];
      let cursor = "";
      let pages = 0;
      do {
        const query: Record<string, string> = {
          identity_id: id,
          include_deleted: String(includeDeleted),
          limit: "3",
        };
        if (cursor) query.page_cursor = cursor;
        const res = await call(sandbox, token, "GET", CONTROLS, { query });
        assertValid(schema("ListIdentityControlsResponse"), res.body, `list page ${pages}`);
        seen.push(...res.body.items.map((c: { id: string }) => c.id));
        cursor = res.body.next_page_cursor;
        pages++;
      } while (cursor !== "");
      assert.deepEqual(
        seen,
        expected.map((c) => c.id),
      );
      assert.equal(pages, Math.ceil(expected.length / 3));
    }
  });

  it("answers delete with a DeleteIdentityControlResponse", async () => {
    const created = await call(sandbox, token, "POST", CONTROLS, {
      body: { identity_id: ids[2], type: "DORMANT", reason_code: "INACTIVITY" },
    });
    const res = await call(sandbox, token, "DELETE", CONTROLS, {
      query: { control_id: created.body.id },
    });
    assert.equal(res.status, 200);
    assertValid(schema("DeleteIdentityControlResponse"), res.body, "delete answer");
    assert.deepEqual(res.body, {});
  });

  it("lists identities whose active_controls are IdentityControl records", async () => {
    const s = await startSandbox({
      identities: 2000,
      migratedFraction: 1,
      rateLimitRps: 0,
      tokenRateLimitRps: 0,
    });
    try {
      const t = await tokenFor(s);
      const page = await call(s, t, "GET", IDENTITIES, { query: { limit: "1000" } });
      let checked = 0;
      for (const identity of page.body.items) {
        for (const c of identity.status_details.active_controls) {
          assertValid(schema("IdentityControl"), c, `active control of ${identity.id}`);
          checked++;
        }
      }
      assert.ok(checked > 50, `${checked} controls checked`);
    } finally {
      await s.close();
    }
  });

  it("rejects, through the extended schema, a set_by outside both spellings (the check can fail)", async () => {
    const odd = sandbox.addControl(ids[3]!, { type: "SELL_ONLY", set_by: "SET_BY_PARTNER" });
    assert.equal(schema("IdentityControl")(odd), false);
    assert.equal(schema("IdentityControl")({ ...odd, extra: 1, set_by: "CLIENT" }), false);
    assert.equal(schema("IdentityControl")({ ...odd, set_by: "CLIENT" }), true);
  });

  it("answers every error as application/problem+json with type, title, status and detail", async () => {
    const ajv = new Ajv({ strict: true });
    const validProblem = ajv.compile(problemSchema);
    const readOnly = (await requestToken(sandbox, { readOnly: true })).body.access_token;
    const answers: [string, Answer][] = [
      ["bad limit", await call(sandbox, token, "GET", IDENTITIES, { query: { limit: "5000" } })],
      [
        "no token",
        await call(sandbox, undefined, "GET", CONTROLS, { query: { identity_id: ids[0]! } }),
      ],
      [
        "missing scope",
        await call(sandbox, readOnly, "DELETE", CONTROLS, { query: { control_id: "x" } }),
      ],
      [
        "unknown identity",
        await call(sandbox, token, "GET", CONTROLS, { query: { identity_id: "nobody" } }),
      ],
      ["unknown route", await call(sandbox, token, "GET", "/v2/identity/nothing")],
      ["unknown root route", await read(await fetch(`${sandbox.apiUrl}/`))],
      ["wrong method", await call(sandbox, token, "PUT", CONTROLS)],
      ["malformed JSON", await call(sandbox, token, "POST", CONTROLS, { rawBody: "{nope" })],
      [
        "frozen",
        await call(sandbox, token, "POST", CONTROLS, {
          body: { identity_id: ids[0], type: "FROZEN", reason_code: "OTHER" },
        }),
      ],
      [
        "unsupported media",
        await call(sandbox, token, "POST", CONTROLS, {
          rawBody: "x",
          headers: { "content-type": "text/plain" },
        }),
      ],
    ];
    const first = await call(sandbox, token, "POST", CONTROLS, {
      body: { identity_id: ids[4], type: "CLOSED", reason_code: "OTHER" },
    });
    await call(sandbox, token, "DELETE", CONTROLS, { query: { control_id: first.body.id } });
    answers.push([
      "second delete",
      await call(sandbox, token, "DELETE", CONTROLS, { query: { control_id: first.body.id } }),
    ]);
    sandbox.setFaults({ failRate: 1 });
    answers.push(["injected 5xx", await call(sandbox, token, "GET", IDENTITIES)]);
    sandbox.setFaults({ failRate: 0 });
    sandbox.setLimits({ rateLimitRps: 1, rateWindowS: 1, penaltyS: 1 });
    await call(sandbox, token, "GET", `${IDENTITIES}/${ids[0]}`);
    answers.push(["rate limited", await call(sandbox, token, "GET", `${IDENTITIES}/${ids[0]}`)]);
    sandbox.setLimits({ rateLimitRps: 0 });

    const statuses = new Set<number>();
    for (const [what, res] of answers) {
      assert.ok(res.status >= 400, `${what}: ${res.status}`);
      assert.match(res.headers.get("content-type") ?? "", /^application\/problem\+json/, what);
      assert.ok(validProblem(res.body), `${what}: ${res.text}`);
      assert.equal(res.body.status, res.status, what);
      statuses.add(res.status);
    }
    for (const s of [400, 401, 403, 404, 405, 409, 415, 429])
      assert.ok(statuses.has(s), `status ${s} covered`);
  });
});
