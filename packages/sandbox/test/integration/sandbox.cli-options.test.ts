import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SandboxUsageError, sandboxOptionsFromArgv } from "../../src/cli/options.ts";
import { DEFAULT_FAULTS, DEFAULT_LIMITS } from "../../src/index.ts";
import { PLATFORM_RATE_LIMIT_RPS, RATE_PENALTY_S, TOKEN_RATE_LIMIT_RPS } from "../../src/shared.ts";

describe("sandboxOptionsFromArgv", () => {
  it("defaults to 127.0.0.1:8080 with the contract's limits (50 rps, 1 token rps, 300 s penalty) and no faults", () => {
    const o = sandboxOptionsFromArgv({});
    assert.equal(o.host, "127.0.0.1");
    assert.equal(o.port, 8080);
    assert.equal(o.rateLimitRps, PLATFORM_RATE_LIMIT_RPS);
    assert.equal(o.rateLimitRps, 50);
    assert.equal(o.tokenRateLimitRps, TOKEN_RATE_LIMIT_RPS);
    assert.equal(o.penaltyS, RATE_PENALTY_S);
    assert.equal(o.tokenTtlS, DEFAULT_LIMITS.tokenTtlS);
    assert.equal(o.failRate, DEFAULT_FAULTS.failRate);
    assert.equal(o.identities, 0);
    assert.equal(o.updatedAtPolicy, "all");
    assert.equal("endpointRateLimits" in o, false);
  });

  it("maps every flag, given as the text a command line carries, onto its start option", () => {
    const o = sandboxOptionsFromArgv({
      port: "0",
      identities: "10",
      seed: "4",
      "migrated-fraction": "0.25",
      "drift-fraction": "0.1",
      "legacy-drift-fraction": "0.2",
      "auto-migrate-rate": "50",
      "rate-limit": "0",
      "token-rate-limit": "2",
      "rate-window-s": "1",
      "penalty-s": "3",
      "latency-ms": "5",
      "latency-jitter-ms": "6",
      "fail-rate": "0.01",
      "ambiguous-rate": "0.02",
      "hang-rate": "0.03",
      "token-ttl-s": "60",
      "duplicate-policy": "reject",
      "updated-at-policy": "identity-fields",
      "set-by-spelling": "short",
    });
    assert.deepEqual(
      { ...o },
      {
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
        updatedAtPolicy: "identity-fields",
        setBySpelling: "short",
      },
    );
  });

  it("refuses each out-of-range flag with a message naming it and the value", () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ "fail-rate": "2" }, "--fail-rate must be at most 1, got 2."],
      [
        { "set-by-spelling": "long" },
        '--set-by-spelling must be one of published, short, got "long".',
      ],
      [{ "hang-rate": "-0.1" }, "--hang-rate must be at least 0, got -0.1."],
      [{ "ambiguous-rate": "1.5" }, "--ambiguous-rate must be at most 1, got 1.5."],
      [{ "migrated-fraction": "3" }, "--migrated-fraction must be at most 1, got 3."],
      [{ "drift-fraction": "-1" }, "--drift-fraction must be at least 0, got -1."],
      [{ port: "70000" }, "--port must be at most 65535, got 70000."],
      [{ port: "80.5" }, '--port must be a whole number, got "80.5".'],
      [{ "rate-limit": "-1" }, "--rate-limit must be at least 0, got -1."],
      [{ "token-rate-limit": "-2" }, "--token-rate-limit must be at least 0, got -2."],
      [{ "penalty-s": "-5" }, "--penalty-s must be at least 0, got -5."],
      [{ "rate-window-s": "0" }, "--rate-window-s must be greater than 0, got 0."],
      [{ "token-ttl-s": "0" }, "--token-ttl-s must be greater than 0, got 0."],
      [{ "latency-ms": "soon" }, '--latency-ms must be a number, got "soon".'],
      [{ "latency-jitter-ms": "-3" }, "--latency-jitter-ms must be at least 0, got -3."],
      [{ identities: "2.5" }, '--identities must be a whole number, got "2.5".'],
      [{ seed: "1.5" }, '--seed must be a whole number, got "1.5".'],
      [
        { "duplicate-policy": "maybe" },
        '--duplicate-policy must be one of allow, reject, got "maybe".',
      ],
      [
        { "updated-at-policy": "honest" },
        '--updated-at-policy must be one of all, identity-fields, none, got "honest".',
      ],
    ];
    for (const [argv, message] of cases) {
      assert.throws(
        () => sandboxOptionsFromArgv(argv),
        (err: Error) => err instanceof SandboxUsageError && err.message === message,
        message,
      );
    }
  });

  it("reports every refused flag at once, one line each", () => {
    assert.throws(
      () => sandboxOptionsFromArgv({ "fail-rate": "2", port: "-1" }),
      (err: Error) =>
        err instanceof SandboxUsageError &&
        err.message ===
          "2 settings need fixing:\n  - --port must be at least 0, got -1.\n  - --fail-rate must be at most 1, got 2.",
    );
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
