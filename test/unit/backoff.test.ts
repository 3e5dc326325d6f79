import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { backoffDelayMs, MAX_TIMER_MS, sleep } from "../../src/backoff.ts";

describe("backoffDelayMs", () => {
  const opts = { baseMs: 250, capMs: 10_000 };

  it("draws from [0, base·2^(retry-1)] (full jitter)", () => {
    assert.equal(
      backoffDelayMs(1, opts, () => 0),
      0,
    );
    assert.equal(
      backoffDelayMs(1, opts, () => 0.999_999),
      249,
    );
    assert.equal(
      backoffDelayMs(3, opts, () => 0.5),
      500,
    );
  });

  it("never exceeds the cap however many retries", () => {
    for (let r = 1; r < 60; r++) {
      assert.ok(backoffDelayMs(r, opts, () => 0.999_999) < opts.capMs);
    }
  });

  it("spreads clients: many draws for the same retry are not all equal", () => {
    const draws = new Set(Array.from({ length: 50 }, () => backoffDelayMs(5, opts)));
    assert.ok(draws.size > 10);
  });
});

describe("sleep", () => {
  it("rejects with the abort reason as soon as the signal aborts", async () => {
    const ac = new AbortController();
    const p = sleep(60_000, ac.signal);
    ac.abort(new Error("cancelled by test"));
    await assert.rejects(p, /cancelled by test/);
  });

  it("rejects at once when the signal is already aborted", async () => {
    await assert.rejects(sleep(10, AbortSignal.abort(new Error("already"))), /already/);
  });
});

describe("sleep beyond a Node timer's range", () => {
  it("waits more than 2^31-1 ms without a TimeoutOverflowWarning and without firing early", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on("warning", onWarning);
    try {
      const ac = new AbortController();
      let resolved = false;
      const p = sleep(MAX_TIMER_MS + 60_000, ac.signal).then(() => {
        resolved = true;
      });
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(resolved, false, "a 24.8-day wait must not end after a few milliseconds");
      ac.abort(new Error("stop"));
      await assert.rejects(p, /stop/);
      // Warnings are emitted on the next tick.
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(warnings, []);
    } finally {
      process.off("warning", onWarning);
    }
  });
});
