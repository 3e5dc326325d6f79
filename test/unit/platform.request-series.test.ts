import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MetricsRecorder } from "../../src/platform/client-metrics.ts";
import { RequestSeries } from "../../src/platform/request-series.ts";

describe("the client's per-second request series", () => {
  it("counts every increment of an endpoint's counters in the second it happened", () => {
    let now = 1_700_000_000_250;
    const m = new MetricsRecorder(new RequestSeries(() => now));
    const list = m.endpoint("GET /v2/identity/identities");
    const create = m.endpoint("POST /v2/identity/controls");
    list.requests += 1;
    create.requests += 1;
    create.rateLimited += 1;
    now += 1_000;
    create.requests += 1;
    create.retries += 1;
    create.ambiguous += 1;
    now += 5_000;
    list.requests += 1;

    const snap = m.snapshot({});
    assert.deepEqual(snap.series, [
      { at: 1_700_000_000, requests: 2, rateLimited: 1, retries: 0, ambiguous: 0 },
      { at: 1_700_000_001, requests: 1, rateLimited: 0, retries: 1, ambiguous: 1 },
      { at: 1_700_000_006, requests: 1, rateLimited: 0, retries: 0, ambiguous: 0 },
    ]);
    const total = snap.series.reduce((n, s) => n + s.requests, 0);
    const perEndpoint = Object.values(snap.endpoints).reduce((n, e) => n + e.requests, 0);
    assert.equal(total, perEndpoint);
  });

  it("counts answers by HTTP status, and failures without an answer by their kind", () => {
    const m = new MetricsRecorder();
    m.status("GET /v2/identity/controls", 200);
    m.status("GET /v2/identity/controls", 200);
    m.status("GET /v2/identity/controls", 429);
    m.status("GET /v2/identity/controls", "timeout");
    assert.deepEqual(m.snapshot({}).endpoints["GET /v2/identity/controls"]?.statuses, {
      "200": 2,
      "429": 1,
      timeout: 1,
    });
  });
});
