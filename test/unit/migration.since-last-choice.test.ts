import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { SinceLastBasis } from "../../src/db/journal/incremental-queries.ts";
import { chooseSinceLast } from "../../src/migration/read/since-last-choice.ts";

const PLATFORM = "https://api.example|https://auth.example/t|c";
const run = (id: string, at: string) => ({ id, startedAt: new Date(at), sinceAt: null });
const basis = (over: Partial<SinceLastBasis> = {}): SinceLastBasis => ({
  complete: run("C", "2026-01-01T02:00:00.000Z"),
  view: run("I2", "2026-01-03T02:00:00.000Z"),
  incrementals: 2,
  staleMisses: 0,
  ...over,
});
const settings = { marginS: 300, fullEvery: 7 };

describe("--since-last's choice between an incremental and a complete read", () => {
  it("reads incrementally from the last complete read's start less the margin, carrying from the last whole view", () => {
    const c = chooseSinceLast(basis(), settings, PLATFORM);
    assert.equal(c.mode, "incremental");
    if (c.mode !== "incremental") return;
    assert.equal(c.sinceAt.toISOString(), "2026-01-01T01:55:00.000Z");
    assert.equal(c.completeId, "C");
    assert.equal(c.viewId, "I2");
  });

  it("reads everything and says so when the platform has no complete read yet", () => {
    const c = chooseSinceLast(basis({ complete: null, view: null }), settings, PLATFORM);
    assert.equal(c.mode, "complete");
    assert.match(c.reason, /no earlier complete read of platform https:\/\/api\.example/);
    assert.equal(c.mode === "complete" && c.check, false);
  });

  it("reads everything every --full-every-th run and checks the incremental runs since", () => {
    const c = chooseSinceLast(basis({ incrementals: 6 }), settings, PLATFORM);
    assert.equal(c.mode, "complete");
    assert.equal(c.mode === "complete" && c.check, true);
    assert.match(c.reason, /run 7 of every 7 since the complete run C/);
    assert.equal(
      chooseSinceLast(basis({ incrementals: 5 }), settings, PLATFORM).mode,
      "incremental",
    );
    assert.equal(
      chooseSinceLast(basis({ incrementals: 0 }), { ...settings, fullEvery: 1 }, PLATFORM).mode,
      "complete",
    );
  });

  it("refuses to read incrementally after a complete read found a miss, naming the platform and the miss", () => {
    const c = chooseSinceLast(basis({ incrementals: 0, staleMisses: 3 }), settings, PLATFORM);
    assert.equal(c.mode, "complete");
    assert.match(
      c.reason,
      /refusing to read incrementally: the complete run C found 3 stale_incremental identities on platform https:\/\/api\.example\|/,
    );
  });
});
