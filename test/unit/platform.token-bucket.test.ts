import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TokenBucket } from "../../src/platform/token-bucket.ts";

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe("TokenBucket", () => {
  it("starts with one token, so a run begins at the sustained rate", () => {
    const c = clock();
    const b = new TokenBucket({ rate: 10, burst: 5, now: c.now });
    assert.equal(b.reserve(), 0);
    assert.equal(b.reserve(), 100);
    assert.equal(b.reserve(), 200);
  });

  it("allows a burst of `burst` requests after an idle spell, then spaces them by 1/rate", () => {
    const c = clock();
    const b = new TokenBucket({ rate: 10, burst: 4, now: c.now });
    b.reserve();
    c.advance(10_000);
    const waits = Array.from({ length: 6 }, () => b.reserve());
    assert.deepEqual(waits, [0, 0, 0, 0, 100, 200]);
  });

  it("never lets more than burst + rate·T reservations fall in any interval of length T", () => {
    const c = clock();
    const rate = 40;
    const burst = 4;
    const b = new TokenBucket({ rate, burst, now: c.now });
    const sends: number[] = [];
    // Irregular demand: idle spells, then floods of callers arriving together.
    let seed = 7;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let round = 0; round < 300; round++) {
      const callers = Math.floor(rand() * 12);
      for (let i = 0; i < callers; i++) sends.push(c.now() + b.reserve());
      c.advance(rand() < 0.2 ? 2000 * rand() : 50 * rand());
    }
    sends.sort((x, y) => x - y);
    for (const T of [100, 1000, 5000]) {
      let j = 0;
      for (let i = 0; i < sends.length; i++) {
        while ((sends[i] as number) - (sends[j] as number) >= T) j++;
        assert.ok(
          i - j + 1 <= burst + (rate * T) / 1000 + 1e-9,
          `window ${T} ms held ${i - j + 1}`,
        );
      }
    }
  });

  it("grants nothing before a pause ends and then only one token, not a burst", () => {
    const c = clock();
    const b = new TokenBucket({ rate: 10, burst: 5, now: c.now });
    c.advance(5000);
    b.pauseUntil(c.now() + 2000);
    assert.equal(b.reserve(), 2000);
    assert.equal(b.reserve(), 2100);
  });

  it("applies a lowered rate to later reservations", () => {
    const c = clock();
    const b = new TokenBucket({ rate: 10, burst: 1, now: c.now });
    b.reserve();
    b.setRate(2);
    assert.equal(b.rate, 2);
    // The slot already promised at the old rate stands; the gaps after it are the new ones.
    assert.equal(b.reserve(), 100);
    assert.equal(b.reserve(), 600);
  });

  it("rejects a non-positive rate instead of dividing by zero", () => {
    assert.throws(() => new TokenBucket({ rate: 0, burst: 1 }), RangeError);
  });

  it("take rejects with the signal's reason when cancelled while waiting", async () => {
    const b = new TokenBucket({ rate: 0.1, burst: 1 });
    await b.take();
    const ac = new AbortController();
    const waiting = b.take(ac.signal);
    ac.abort(new Error("stop"));
    await assert.rejects(waiting, /stop/);
  });
});
