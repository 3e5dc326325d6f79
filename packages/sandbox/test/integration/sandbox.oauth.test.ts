import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { READ_ONLY_SCOPES, type Sandbox, SCOPES, startSandbox } from "../../src/index.ts";
import {
  assertProblem,
  CONTROLS,
  call,
  IDENTITIES,
  read,
  requestToken,
  tokenFor,
} from "../helpers/sandbox-http.ts";

describe("sandbox OAuth2 client credentials", () => {
  let sandbox: Sandbox;
  let identityId: string;
  let controlId: string;

  before(async () => {
    sandbox = await startSandbox({ identities: 50, rateLimitRps: 0, tokenRateLimitRps: 0 });
    identityId = (await call(sandbox, await tokenFor(sandbox), "GET", IDENTITIES)).body.items[0].id;
    controlId = sandbox.addControl(identityId, { type: "SELL_ONLY" }).id;
  });
  after(() => sandbox.close());

  it("issues a bearer token to a client sending client_id and client_secret in the body", async () => {
    const res = await requestToken(sandbox);
    assert.equal(res.status, 200);
    assert.equal(res.body.token_type, "Bearer");
    assert.equal(res.body.expires_in, 3600);
    assert.equal(typeof res.body.access_token, "string");
    assert.ok(res.body.access_token.length >= 32);
    assert.deepEqual(res.body.scope.split(" ").sort(), Object.values(SCOPES).sort());
    assert.equal(res.headers.get("cache-control"), "no-store");
  });

  it("issues a bearer token to a client authenticating with HTTP Basic", async () => {
    const res = await requestToken(sandbox, { basic: true });
    assert.equal(res.status, 200);
    const list = await call(sandbox, res.body.access_token, "GET", IDENTITIES);
    assert.equal(list.status, 200);
  });

  it("refuses a wrong secret with 401 invalid_client, in the body and with Basic", async () => {
    const { clientId } = sandbox.credentials;
    const inBody = await read(
      await fetch(sandbox.tokenUrl, {
        method: "POST",
        body: new URLSearchParams({
          grant_type: "client_credentials",
          client_id: clientId,
          client_secret: "wrong-secret",
        }),
      }),
    );
    assert.equal(inBody.status, 401);
    assert.equal(inBody.body.error, "invalid_client");
    const basic = await read(
      await fetch(sandbox.tokenUrl, {
        method: "POST",
        headers: { authorization: `Basic ${Buffer.from(`${clientId}:nope`).toString("base64")}` },
        body: new URLSearchParams({ grant_type: "client_credentials" }),
      }),
    );
    assert.equal(basic.status, 401);
    assert.equal(basic.body.error, "invalid_client");
  });

  it("refuses an unknown client and a request without client authentication with 401", async () => {
    const forms: Record<string, string>[] = [
      { grant_type: "client_credentials", client_id: "who", client_secret: "x" },
      { grant_type: "client_credentials" },
    ];
    for (const form of forms) {
      const res = await read(
        await fetch(sandbox.tokenUrl, { method: "POST", body: new URLSearchParams(form) }),
      );
      assert.equal(res.status, 401);
      assert.equal(res.body.error, "invalid_client");
    }
  });

  it("refuses a grant other than client_credentials and a non-form body with 400", async () => {
    const c = sandbox.credentials;
    const grant = await read(
      await fetch(sandbox.tokenUrl, {
        method: "POST",
        body: new URLSearchParams({
          grant_type: "password",
          client_id: c.clientId,
          client_secret: c.clientSecret,
        }),
      }),
    );
    assert.equal(grant.status, 400);
    assert.equal(grant.body.error, "unsupported_grant_type");
    const json = await read(
      await fetch(sandbox.tokenUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ grant_type: "client_credentials" }),
      }),
    );
    assert.equal(json.status, 400);
    assert.equal(json.body.error, "invalid_request");
  });

  it("grants a requested subset of the allowed scopes, and the token carries only that subset", async () => {
    const res = await requestToken(sandbox, { scope: SCOPES.readIdentity });
    assert.equal(res.status, 200);
    assert.equal(res.body.scope, SCOPES.readIdentity);
    const token = res.body.access_token;
    assert.equal((await call(sandbox, token, "GET", IDENTITIES)).status, 200);
    assertProblem(
      await call(sandbox, token, "GET", CONTROLS, { query: { identity_id: identityId } }),
      403,
      /identity:read_identity_control/,
    );
  });

  // Which endpoint each scope opens (and that the read-only client writes nothing) is
  // sandbox.scopes.test.ts's, for every endpoint; here, what the token endpoint grants.
  it("grants the read-only client every read scope and no write scope, and refuses it each write scope with 400 invalid_scope", async () => {
    const res = await requestToken(sandbox, { readOnly: true });
    assert.deepEqual(res.body.scope.split(" ").sort(), [...READ_ONLY_SCOPES].sort());
    assert.ok(!res.body.scope.includes("write"));
    const writeScopes = Object.values(SCOPES).filter((s) => s.includes(":write_"));
    assert.ok(writeScopes.length >= 3, `write scopes: ${writeScopes}`);
    for (const s of writeScopes) {
      const refused = await requestToken(sandbox, { readOnly: true, scope: s });
      assert.equal(refused.status, 400, s);
      assert.equal(refused.body.error, "invalid_scope", s);
    }
  });

  it("answers 401 problems for a missing, malformed or unknown bearer token on every endpoint", async () => {
    const token = await tokenFor(sandbox);
    const endpoints: [string, string, Record<string, string>][] = [
      ["GET", IDENTITIES, {}],
      ["GET", `${IDENTITIES}/${identityId}`, {}],
      ["GET", CONTROLS, { identity_id: identityId }],
      ["DELETE", CONTROLS, { control_id: controlId }],
    ];
    const headers: [Record<string, string>, RegExp][] = [
      [{}, /no authorization header/],
      [{ authorization: `Token ${token}` }, /must be 'Bearer <token>'/],
      [{ authorization: "Bearer" }, /must be 'Bearer <token>'/],
      [{ authorization: `Bearer ${token}x` }, /unknown/],
    ];
    for (const [method, path, query] of endpoints) {
      for (const [h, detail] of headers) {
        const res = await call(sandbox, undefined, method, path, { query, headers: h });
        assertProblem(res, 401, detail);
        assert.ok(!res.text.includes(token), "the token is never echoed");
      }
    }
    assert.equal(sandbox.controlsOf(identityId).length, 1, "the control survived every refusal");
  });

  it("answers 401 for a revoked token, and a newly issued token works", async () => {
    const old = await tokenFor(sandbox);
    sandbox.revokeTokens();
    assertProblem(await call(sandbox, old, "GET", IDENTITIES), 401, /revoked/);
    const fresh = await tokenFor(sandbox);
    assert.equal((await call(sandbox, fresh, "GET", IDENTITIES)).status, 200);
    assert.ok(sandbox.stats().faults.revocations >= 1);
  });

  it("answers 401 for an expired token and reports the configured lifetime in expires_in", async () => {
    sandbox.setLimits({ tokenTtlS: 1 });
    try {
      const res = await requestToken(sandbox);
      assert.equal(res.body.expires_in, 1);
      assert.equal((await call(sandbox, res.body.access_token, "GET", IDENTITIES)).status, 200);
      await sleep(1100);
      assertProblem(await call(sandbox, res.body.access_token, "GET", IDENTITIES), 401, /expired/);
    } finally {
      sandbox.setLimits({ tokenTtlS: 3600 });
    }
  });

  it("counts issued tokens in stats and never prints a secret there", async () => {
    const before = sandbox.stats().tokensIssued;
    await tokenFor(sandbox);
    const stats = sandbox.stats();
    assert.equal(stats.tokensIssued, before + 1);
    assert.ok(!JSON.stringify(stats).includes(sandbox.credentials.clientSecret));
  });
});
