/**
 * `--latency-ms` delays each request as a network would: requests in flight at once wait side by
 * side, not one after another, and each one waits the whole latency.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Sandbox, startSandbox } from "../../src/index.ts";
import { call, IDENTITIES, tokenFor } from "../helpers/sandbox-http.ts";

/** Long enough that eight requests sent together are all being delayed before the first answer. */
const LATENCY = 1_000;

describe("sandbox latency fault", () => {
  let sandbox: Sandbox;
  let token: string;
  before(async () => {
    sandbox = await startSandbox({ identities: 50, rateLimitRps: 0, tokenRateLimitRps: 0 });
    token = await tokenFor(sandbox);
    sandbox.setFaults({ latencyMs: LATENCY });
  });
  after(() => sandbox.close());

  it("delays every request by at least the latency, and holds concurrent requests side by side, not one after another", async () => {
    const timed = async () => {
      const t0 = performance.now();
      const res = await call(sandbox, token, "GET", IDENTITIES, { query: { limit: "5" } });
      assert.equal(res.status, 200);
      return performance.now() - t0;
    };
    const delayed = () => sandbox.stats().faults.latency;
    const before = delayed();
    let answered = 0;
    const each = Array.from({ length: 8 }, () =>
      timed().then((ms) => {
        answered += 1;
        return ms;
      }),
    );
    // All eight are being delayed at once before the first answer: side by side. One after
    // another, the first would be answered before the second was delayed.
    while (delayed() < before + 8) await new Promise((r) => setTimeout(r, 5));
    assert.equal(answered, 0, "no answer before all eight requests were being delayed");
    for (const ms of await Promise.all(each)) {
      assert.ok(ms >= LATENCY - 5, `a request took only ${ms} ms`);
    }
    const s0 = performance.now();
    for (let i = 0; i < 3; i++) await timed();
    assert.ok(performance.now() - s0 >= 3 * LATENCY - 15, "sequential requests add up");
    assert.equal(delayed(), before + 11);
  });
});
