import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { inspect } from "node:util";
import { loadGlobalConfig, loadPlatformConfig, loadSourceConfig } from "../../src/config.ts";
import { UserError } from "../../src/errors.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const baseEnv = {
  API_BASE_URL: "https://api.example.com",
  OAUTH_TOKEN_URL: "https://auth.example.com/oauth2/token",
  OAUTH_CLIENT_ID: "client-1",
  OAUTH_CLIENT_SECRET: "s3cret-value-xyz",
};

describe("loadPlatformConfig", () => {
  it("refuses plain http to a non-loopback API or token host, naming the env var or flag that set it and saying why", () => {
    assert.throws(
      () => loadPlatformConfig({}, { ...baseEnv, API_BASE_URL: "http://api.example.com" }),
      (err: Error) =>
        err instanceof UserError &&
        /API_BASE_URL/.test(err.message) &&
        /unencrypted/.test(err.message),
    );
    for (const [flag, url] of [
      ["api-url", "http://api.example.com"],
      ["token-url", "http://auth.example.com/oauth2/token"],
    ] as const) {
      assert.throws(
        () => loadPlatformConfig({ [flag]: url }, baseEnv),
        (err: unknown) =>
          err instanceof UserError &&
          err.message.includes(`--${flag}`) &&
          err.message.includes(`"${new URL(url).hostname}"`) &&
          /unencrypted/.test(err.message),
        flag,
      );
    }
  });

  it("accepts plain http for 127.0.0.0/8, ::1 and localhost", () => {
    for (const host of ["127.0.0.1:8080", "127.9.8.7", "[::1]:9", "localhost:1"]) {
      const cfg = loadPlatformConfig({ "api-url": `http://${host}` }, baseEnv);
      assert.match(cfg.apiUrl, /^http:\/\//);
    }
  });

  it("lets flags win over env vars and env vars over defaults", () => {
    const cfg = loadPlatformConfig(
      { rate: 12 },
      { ...baseEnv, CONTROLS_RATE: "20", CONTROLS_CONCURRENCY: "3" },
    );
    assert.equal(cfg.rate, 12);
    assert.equal(cfg.concurrency, 3);
    assert.equal(cfg.timeoutMs, 30_000);
  });

  it("names the env var when a number is malformed", () => {
    assert.throws(
      () => loadPlatformConfig({}, { ...baseEnv, CONTROLS_RATE: "fast" }),
      /env CONTROLS_RATE/,
    );
  });

  it("reads the secret from a file and never prints it", () => {
    const dir = tempDir("cm-");
    const file = join(dir, "secret");
    writeFileSync(file, "file-secret-123\n");
    const { OAUTH_CLIENT_SECRET: _drop, ...env } = baseEnv;
    const cfg = loadPlatformConfig({ "client-secret-file": file }, env);
    assert.equal(cfg.clientSecret.reveal(), "file-secret-123");
    const printed = `${cfg.clientSecret} ${JSON.stringify(cfg)} ${inspect(cfg)}`;
    assert.ok(!printed.includes("file-secret-123"));
  });

  it("says how to provide a missing secret", () => {
    const { OAUTH_CLIENT_SECRET: _drop, ...env } = baseEnv;
    assert.throws(() => loadPlatformConfig({}, env), /OAUTH_CLIENT_SECRET.*--client-secret-file/);
  });
});

describe("loadGlobalConfig and loadSourceConfig", () => {
  it("default to embedded PGlite under .data/pglite and the identities relation", () => {
    const g = loadGlobalConfig({}, {});
    assert.equal(g.databaseUrl, undefined);
    assert.equal(g.dataDir, ".data/pglite");
    const s = loadSourceConfig({}, {});
    assert.deepEqual(
      [s.relation, s.idColumn, s.userDisabledColumn, s.adminDisabledColumn, s.batchSize],
      ["identities", "id", "user_disabled", "admin_disabled", 1000],
    );
  });

  it("rejects a DATABASE_URL that is not a postgres URL, naming the env var", () => {
    assert.throws(() => loadGlobalConfig({}, { DATABASE_URL: "mysql://x" }), /env DATABASE_URL/);
  });
});
