import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { inspect } from "node:util";
import { loadPlatformConfig } from "../../src/config.ts";
import { createPlatformClient, READ_SCOPES, WRITE_SCOPES } from "../../src/platform/index.ts";

const env = { OAUTH_CLIENT_ID: "client-1", OAUTH_CLIENT_SECRET: "very-secret-value-1" };

describe("platform client configuration", () => {
  it("builds a client from the compiled config without printing the secret", () => {
    const cfg = loadPlatformConfig(
      { "api-url": "https://api.example.com", "token-url": "https://auth.example.com/t" },
      env,
    );
    assert.deepEqual([cfg.rate, cfg.concurrency, cfg.tokenRps], [40, 8, 1]);
    const client = createPlatformClient(cfg, { scopes: READ_SCOPES });
    const shown = `${inspect(client, { depth: 5, showHidden: true })} ${JSON.stringify(client)} ${JSON.stringify(client.metrics())}`;
    assert.ok(!shown.includes("very-secret-value-1"));
    void client.close();
  });

  it("offers read scopes for read-only commands and adds only the write scope for writers", () => {
    assert.deepEqual(
      [...READ_SCOPES],
      ["identity:read_identity", "identity:read_identity_control"],
    );
    assert.deepEqual([...WRITE_SCOPES], [...READ_SCOPES, "identity:write_identity_control"]);
  });
});
