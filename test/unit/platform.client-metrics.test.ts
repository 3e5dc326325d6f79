import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LatencyHistogram, MetricsRecorder } from "../../src/platform/client-metrics.ts";

describe("LatencyHistogram", () => {
  it("reports percentiles within 10% of the exact value", () => {
    const h = new LatencyHistogram();
    for (let i = 1; i <= 1000; i++) h.record(i);
    const p50 = h.percentile(0.5) as number;
    const p95 = h.percentile(0.95) as number;
    assert.ok(p50 >= 500 && p50 <= 550, `p50 ${p50}`);
    assert.ok(p95 >= 950 && p95 <= 1000, `p95 ${p95}`);
    assert.equal(h.max, 1000);
  });

  it("returns null before any value and clamps huge ones into the last bucket", () => {
    const h = new LatencyHistogram();
    assert.equal(h.percentile(0.5), null);
    h.record(10_000_000);
    assert.equal(h.count, 1);
    assert.equal(h.percentile(0.5), 10_000_000);
  });
});

describe("MetricsRecorder", () => {
  it("produces a plain JSON-serialisable snapshot per endpoint", () => {
    const m = new MetricsRecorder();
    const e = m.endpoint("GET /v2/identity/controls");
    e.requests += 2;
    e.latency.record(12);
    m.error("GET /v2/identity/controls", "server");
    m.error("GET /v2/identity/controls", "server");
    const snap = m.snapshot({});
    const round = JSON.parse(JSON.stringify(snap));
    assert.deepEqual(round, snap);
    assert.equal(snap.endpoints["GET /v2/identity/controls"]?.errors.server, 2);
    assert.equal(snap.endpoints["GET /v2/identity/controls"]?.latencyMs.count, 1);
  });
});
