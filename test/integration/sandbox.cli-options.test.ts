import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { sandboxOptionsFromArgv } from "../../src/commands/sandbox-options.ts";
import { UserError } from "../../src/errors.ts";

describe("sandboxOptionsFromArgv", () => {
  it("defaults to 127.0.0.1:8080 and leaves the other settings to startSandbox", () => {
    const o = sandboxOptionsFromArgv({});
    assert.equal(o.host, "127.0.0.1");
    assert.equal(o.port, 8080);
    assert.equal(o.rateLimitRps, undefined);
    assert.equal(o.failRate, undefined);
  });

  it("maps every flag onto its start option", () => {
    const o = sandboxOptionsFromArgv({
      port: 0,
      identities: 10,
      seed: 4,
      "migrated-fraction": 0.25,
      "drift-fraction": 0.1,
      "legacy-drift-fraction": 0.2,
      "auto-migrate-rate": 50,
      "rate-limit": 0,
      "token-rate-limit": 2,
      "rate-window-s": 1,
      "penalty-s": 3,
      "latency-ms": 5,
      "latency-jitter-ms": 6,
      "fail-rate": 0.01,
      "ambiguous-rate": 0.02,
      "hang-rate": 0.03,
      "token-ttl-s": 60,
      "duplicate-policy": "reject",
      "set-by-spelling": "short",
    });
    assert.deepEqual(o, {
      host: "127.0.0.1",
      port: 0,
      identities: 10,
      seed: 4,
      migratedFraction: 0.25,
      driftFraction: 0.1,
      legacyDriftFraction: 0.2,
      autoMigrateRate: 50,
      rateLimitRps: 0,
      tokenRateLimitRps: 2,
      rateWindowS: 1,
      penaltyS: 3,
      latencyMs: 5,
      latencyJitterMs: 6,
      failRate: 0.01,
      ambiguousRate: 0.02,
      hangRate: 0.03,
      tokenTtlS: 60,
      duplicatePolicy: "reject",
      setBySpelling: "short",
    });
  });

  it("refuses each out-of-range flag with a message naming it and the value", () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ "fail-rate": 2 }, "--fail-rate must be between 0 and 1, got 2."],
      [{ "set-by-spelling": "long" }, '--set-by-spelling must be published or short, got "long".'],
      [{ "hang-rate": -0.1 }, "--hang-rate must be between 0 and 1, got -0.1."],
      [{ "ambiguous-rate": 1.5 }, "--ambiguous-rate must be between 0 and 1, got 1.5."],
      [{ "migrated-fraction": 3 }, "--migrated-fraction must be between 0 and 1, got 3."],
      [{ "drift-fraction": -1 }, "--drift-fraction must be between 0 and 1, got -1."],
      [{ port: 70000 }, "--port must be between 0 and 65535, got 70000."],
      [{ port: 80.5 }, "--port must be a whole number, got 80.5."],
      [{ port: [1, 2] }, "--port was given more than once."],
      [{ "rate-limit": -1 }, "--rate-limit must be at least 0, got -1."],
      [{ "token-rate-limit": -2 }, "--token-rate-limit must be at least 0, got -2."],
      [{ "penalty-s": -5 }, "--penalty-s must be at least 0, got -5."],
      [{ "rate-window-s": 0 }, "--rate-window-s must be greater than 0, got 0."],
      [{ "token-ttl-s": 0 }, "--token-ttl-s must be greater than 0, got 0."],
      [{ "latency-ms": Number.NaN }, "--latency-ms must be a number, got null."],
      [{ "latency-jitter-ms": -3 }, "--latency-jitter-ms must be at least 0, got -3."],
      [{ identities: 2.5 }, "--identities must be a whole number, got 2.5."],
      [{ seed: 1.5 }, "--seed must be a whole number, got 1.5."],
      [{ "duplicate-policy": "maybe" }, '--duplicate-policy must be allow or reject, got "maybe".'],
      [
        { "from-db": true, identities: 5 },
        "--from-db and --identities are exclusive: seed from one or the other.",
      ],
      [{ host: "" }, "--host must not be empty."],
    ];
    for (const [argv, message] of cases) {
      assert.throws(
        () => sandboxOptionsFromArgv(argv),
        (err: Error) => err instanceof UserError && err.message === message,
        message,
      );
    }
  });

  it("refuses a non-loopback host unless --allow-remote is given", () => {
    assert.throws(() => sandboxOptionsFromArgv({ host: "0.0.0.0" }), /--allow-remote/);
    assert.throws(() => sandboxOptionsFromArgv({ host: "192.168.1.5" }), /not a loopback address/);
    assert.equal(sandboxOptionsFromArgv({ host: "0.0.0.0", "allow-remote": true }).host, "0.0.0.0");
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "localhost"]) {
      assert.equal(sandboxOptionsFromArgv({ host }).host, host);
    }
  });
});
