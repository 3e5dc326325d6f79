import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { type Sandbox, startSandbox } from "controls-sandbox";
import { loadPlatformConfig, type PlatformConfig } from "../../src/config.ts";
import { syntheticIdentities } from "../../src/contract/index.ts";
import {
  createPlatformClient,
  PlatformError,
  READ_SCOPES,
  WRITE_SCOPES,
} from "../../src/platform/index.ts";

const IDS = [...syntheticIdentities(50, 1)].map((r) => r.id);

function configFor(
  sb: Sandbox,
  over: Partial<PlatformConfig> = {},
  creds = { id: sb.credentials.clientId, secret: sb.credentials.clientSecret },
): PlatformConfig {
  const base = loadPlatformConfig(
    { "api-url": sb.apiUrl, "token-url": sb.tokenUrl, "client-id": creds.id },
    { OAUTH_CLIENT_SECRET: creds.secret },
  );
  return { ...base, rate: 10_000, concurrency: 16, retryBaseMs: 5, retryCapMs: 50, ...over };
}

describe("token manager against the sandbox", () => {
  let sb: Sandbox;

  before(async () => {
    sb = await startSandbox({ identities: 50, rateLimitRps: 0 });
  });
  after(async () => {
    await sb.close();
  });
  beforeEach(() => {
    sb.reset();
    sb.setLimits({ tokenTtlS: 3600, tokenRateLimitRps: 1, rateWindowS: 300 });
    sb.setFaults({ failRate: 0, hangRate: 0, ambiguousRate: 0 });
    sb.seedIdentities([...syntheticIdentities(50, 1)]);
  });

  it("serves 1,000 requests with exactly one token request", async () => {
    const client = createPlatformClient(configFor(sb), { scopes: READ_SCOPES });
    await Promise.all(
      Array.from({ length: 1000 }, (_, i) => client.getIdentity(IDS[i % IDS.length] as string)),
    );
    assert.equal(sb.stats().tokensIssued, 1);
    assert.equal(sb.stats().requests["GET /v2/identity/identities/:id"]?.["200"], 1000);
    const m = client.metrics();
    assert.deepEqual([m.token.requests, m.token.issued], [1, 1]);
    await client.close();
  });

  it("refreshes once, ahead of expiry, when the token's lifetime runs out", async () => {
    // A 5 s token is refreshed from 4.5 s on: the first 20 reads fit well before that even on a
    // loaded machine; the next 20 start once the token has expired (a lower bound, never an upper).
    sb.setLimits({ tokenTtlS: 5 });
    const client = createPlatformClient(configFor(sb), { scopes: READ_SCOPES });
    const started = Date.now();
    await Promise.all(IDS.slice(0, 20).map((id) => client.getIdentity(id)));
    assert.equal(sb.stats().tokensIssued, 1, "the first 20 reads shared one token");
    await delay(Math.max(0, 5300 - (Date.now() - started)));
    await Promise.all(IDS.slice(20, 40).map((id) => client.getIdentity(id)));
    assert.equal(sb.stats().tokensIssued, 2);
    // Refreshed before the platform refused it: no request needed a 401 replay.
    const replays = client.metrics().endpoints["GET /v2/identity/identities/{id}"]?.authReplays;
    assert.equal(replays, 0);
    await client.close();
  });

  it("survives a revocation mid-run with one refresh and no failed request", async () => {
    const client = createPlatformClient(configFor(sb, { concurrency: 8 }), {
      scopes: READ_SCOPES,
    });
    let done = 0;
    const results = await Promise.allSettled(
      Array.from({ length: 300 }, async (_, i) => {
        const identity = await client.getIdentity(IDS[i % IDS.length] as string);
        done += 1;
        if (done === 100) sb.revokeTokens();
        return identity;
      }),
    );
    assert.deepEqual(
      results.filter((r) => r.status === "rejected"),
      [],
    );
    assert.equal(sb.stats().tokensIssued, 2);
    assert.equal(sb.stats().faults.revocations, 1);
    const replays = client.metrics().endpoints["GET /v2/identity/identities/{id}"]?.authReplays;
    assert.ok((replays ?? 0) >= 1, "the revoked requests were replayed");
    await client.close();
  });

  it("asks for exactly the scopes it was given", async () => {
    const ro = { id: sb.credentials.readOnlyClientId, secret: sb.credentials.readOnlyClientSecret };
    const reader = createPlatformClient(configFor(sb, {}, ro), { scopes: READ_SCOPES });
    const page = await reader.listIdentityControls(IDS[0] as string);
    assert.ok(Array.isArray(page));
    await reader.close();

    const writer = createPlatformClient(configFor(sb, {}, ro), { scopes: WRITE_SCOPES });
    await assert.rejects(
      writer.listIdentityControls(IDS[0] as string),
      (err: unknown) =>
        err instanceof PlatformError &&
        err.kind === "forbidden" &&
        /invalid_scope/.test(err.message) &&
        /identity:write_identity_control/.test(err.message),
    );
    await writer.close();
  });

  it("turns bad client credentials into a clear error that names the settings", async () => {
    const client = createPlatformClient(
      configFor(sb, {}, { id: sb.credentials.clientId, secret: "not-the-secret-0123" }),
      { scopes: READ_SCOPES },
    );
    await assert.rejects(client.getIdentity(IDS[0] as string), (err: unknown) => {
      assert.ok(err instanceof PlatformError);
      assert.equal(err.kind, "unauthorized");
      assert.match(err.message, /OAUTH_CLIENT_ID/);
      assert.match(err.message, /--client-secret-file/);
      assert.ok(!err.message.includes("not-the-secret-0123"));
      return true;
    });
    // A credentials refusal is fatal: asked once, not retried, not asked again by queued calls.
    const queued = await Promise.allSettled(IDS.slice(0, 20).map((id) => client.getIdentity(id)));
    for (const r of queued) {
      assert.equal(r.status, "rejected");
      assert.equal((r as PromiseRejectedResult).reason.kind, "unauthorized");
    }
    assert.equal(client.metrics().token.requests, 1);
    assert.equal(sb.stats().requests["POST /oauth2/token"]?.["401"], 1);
    await client.close();
  });

  it("after a token the API never accepts, refreshes once and then names the likely causes", async () => {
    const clients = [
      { clientId: "c-1", clientSecret: "shared-secret-1", scopes: [...WRITE_SCOPES] },
    ];
    const issuer = await startSandbox({ clients, rateLimitRps: 0, tokenRateLimitRps: 0 });
    const api = await startSandbox({ clients, rateLimitRps: 0, identities: 5 });
    try {
      const cfg = {
        ...configFor(api, {}, { id: "c-1", secret: "shared-secret-1" }),
        tokenUrl: issuer.tokenUrl,
      };
      const client = createPlatformClient(cfg, { scopes: READ_SCOPES });
      await assert.rejects(client.getIdentity(IDS[0] as string), (err: unknown) => {
        assert.ok(err instanceof PlatformError);
        assert.equal(err.kind, "unauthorized");
        assert.equal(err.status, 401);
        assert.match(err.message, /revoked/);
        assert.match(err.message, /different client or tenant/);
        assert.match(err.message, /clock/);
        return true;
      });
      assert.equal(issuer.stats().tokensIssued, 2);
      assert.equal(api.stats().requests["GET /v2/identity/identities/:id"]?.["401"], 2);
      await client.close();
    } finally {
      await issuer.close();
      await api.close();
    }
  });
});
