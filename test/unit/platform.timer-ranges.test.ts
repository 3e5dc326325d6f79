/**
 * No timer of the platform client overflows: Node cuts a delay beyond 2^31-1 ms to 1 ms (with a
 * TimeoutOverflowWarning), which turns "wait for weeks" into "go now".
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MAX_TIMER_MS } from "../../src/backoff.ts";
import { LinkedSignal } from "../../src/platform/linked-signal.ts";
import { TokenBucket } from "../../src/platform/token-bucket.ts";

async function warningsDuring(fn: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const onWarning = (w: Error) => seen.push(w.name);
  process.on("warning", onWarning);
  try {
    await fn();
    await new Promise((r) => setImmediate(r));
    return seen;
  } finally {
    process.off("warning", onWarning);
  }
}

describe("timers beyond a Node timer's range", () => {
  it("a token bucket paused for longer than 2^31-1 ms grants nothing early and does not warn", async () => {
    const warnings = await warningsDuring(async () => {
      const bucket = new TokenBucket({ rate: 10, burst: 1 });
      bucket.tryTake();
      bucket.pauseUntil(Date.now() + MAX_TIMER_MS + 60_000);
      const ac = new AbortController();
      let granted = false;
      const waiting = bucket.take(ac.signal).then((g) => {
        granted = g;
      });
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(granted, false);
      ac.abort(new Error("stop"));
      await assert.rejects(waiting, /stop/);
    });
    assert.deepEqual(warnings, []);
  });

  it("a request timeout longer than 2^31-1 ms does not fire at once", async () => {
    const warnings = await warningsDuring(async () => {
      const link = new LinkedSignal([], MAX_TIMER_MS * 2);
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(link.signal.aborted, false);
      link.dispose();
    });
    assert.deepEqual(warnings, []);
  });
});
