/**
 * The platform client's phases, each on its own: open, halted (the platform refused past the
 * run's limits) and closed. A real client, pointed at a loopback port nothing listens on: a
 * halted or closed client must stop a request before it sends anything, so nothing is ever sent.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { loadPlatformConfig } from "../../src/config.ts";
import { ClientLifecycle, nextClientPhase } from "../../src/platform/client-lifecycle.ts";
import { PlatformApi } from "../../src/platform/platform-client.ts";
import { PlatformError } from "../../src/platform/platform-error.ts";

const config = loadPlatformConfig(
  {},
  {
    API_BASE_URL: "http://127.0.0.1:9",
    OAUTH_TOKEN_URL: "http://127.0.0.1:9/oauth2/token",
    OAUTH_CLIENT_ID: "client-1",
    OAUTH_CLIENT_SECRET: "s3cret-value-xyz",
  },
);
const refusal = () =>
  new PlatformError({
    kind: "rate_limited",
    classification: "fatal",
    endpoint: "GET /v2/identity/identities",
    detail: "refused for longer than --max-refused-s",
  });
const requestsSent = (api: PlatformApi) =>
  Object.values(api.metrics().endpoints).reduce((n, e) => n + e.requests, 0);

describe("the platform client's phases", () => {
  it("goes from open to halted or closed, from halted to closed, and stays closed", () => {
    assert.equal(nextClientPhase("open", "halt"), "halted");
    assert.equal(nextClientPhase("open", "close"), "closed");
    assert.equal(nextClientPhase("halted", "halt"), "halted");
    assert.equal(nextClientPhase("halted", "close"), "closed");
    assert.equal(nextClientPhase("closed", "halt"), "closed");
  });

  it("aborts its signal with the first reason only: a halt after a close does not rename it", () => {
    const life = new ClientLifecycle();
    assert.equal(life.phase, "open");
    assert.equal(life.signal.aborted, false);
    life.close();
    life.halt(refusal());
    assert.equal(life.phase, "closed");
    assert.match(String(life.signal.reason), /platform client closed/);
  });

  it("ends with the caller's signal too, while its own phase stays open", () => {
    const run = new AbortController();
    const life = new ClientLifecycle(run.signal);
    run.abort(new Error("run cancelled"));
    assert.equal(life.signal.aborted, true);
    assert.equal(life.phase, "open");
  });

  it("stops every request of a halted client with the platform's refusal, before sending", async () => {
    const api = new PlatformApi(config, { scopes: [] });
    api.halt(refusal());
    assert.equal(api.phase, "halted");
    await assert.rejects(api.getIdentity("a"), (err: PlatformError) => {
      assert.equal(err.kind, "cancelled");
      assert.equal(err.detail, "refused for longer than --max-refused-s");
      return true;
    });
    await assert.rejects(api.listIdentities().next(), { kind: "cancelled" });
    assert.equal(requestsSent(api), 0);
  });

  it("keeps the refusal as the reason once a halted client is closed", async () => {
    const api = new PlatformApi(config, { scopes: [] });
    api.halt(refusal());
    api.close();
    assert.equal(api.phase, "closed");
    await assert.rejects(api.listIdentityControls("a"), {
      kind: "cancelled",
      detail: "refused for longer than --max-refused-s",
    });
    assert.equal(requestsSent(api), 0);
  });

  it("refuses a request of a closed client before sending: cancelled before sending", async () => {
    const api = new PlatformApi(config, { scopes: [] });
    api.close();
    await assert.rejects(api.getIdentity("a"), {
      kind: "cancelled",
      detail: "cancelled before sending",
    });
    assert.equal(requestsSent(api), 0);
  });
});
