/**
 * `--latency-ms` delays each request as a network would: requests in flight at once wait side by
 * side, not one after another, and each one waits the whole latency.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Sandbox, startSandbox } from "../../src/index.ts";
import { call, IDENTITIES, tokenFor } from "../helpers/sandbox-http.ts";

const LATENCY = 250;

describe("sandbox latency fault", () => {
  let sandbox: Sandbox;
  let token: string;
  before(async () => {
    sandbox = await startSandbox({ identities: 50, rateLimitRps: 0, tokenRateLimitRps: 0 });
    token = await tokenFor(sandbox);
    sandbox.setFaults({ latencyMs: LATENCY });
  });
  after(() => sandbox.close());

  it("delays every request by the latency, and concurrent requests together, as a network would", async () => {
    const timed = async () => {
      const t0 = performance.now();
      const res = await call(sandbox, token, "GET", IDENTITIES, { query: { limit: "5" } });
      assert.equal(res.status, 200);
      return performance.now() - t0;
    };
    const t0 = performance.now();
    const each = await Promise.all(Array.from({ length: 8 }, timed));
    const all = performance.now() - t0;
    for (const ms of each) assert.ok(ms >= LATENCY - 5, `a request took only ${ms} ms`);
    // Serialized, 8 requests would take 8 × 250 ms = 2 s; side by side about 250 ms.
    assert.ok(all < 4 * LATENCY, `8 concurrent requests took ${Math.round(all)} ms`);
    const s0 = performance.now();
    for (let i = 0; i < 3; i++) await timed();
    assert.ok(performance.now() - s0 >= 3 * LATENCY - 15, "sequential requests add up");
    assert.ok(sandbox.stats().faults.latency >= 11);
  });
});
