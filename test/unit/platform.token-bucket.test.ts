import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CAP_GUARD_MS, TokenBucket } from "../../src/platform/token-bucket.ts";

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms), set: (v: number) => (t = v) };
}

/** Grants every request as early as the bucket allows; returns the grant times. */
function drain(b: TokenBucket, c: ReturnType<typeof clock>, n: number): number[] {
  const times: number[] = [];
  while (times.length < n) {
    if (b.tryTake()) times.push(c.now());
    else c.set(Math.max(c.now(), b.nextAt()));
  }
  return times;
}

describe("TokenBucket", () => {
  it("starts with one token, so a run begins at the sustained rate", () => {
    const c = clock();
    const b = new TokenBucket({ rate: 10, burst: 5, now: c.now });
    const t0 = c.now();
    assert.deepEqual(
      drain(b, c, 3).map((t) => t - t0),
      [0, 100, 200],
    );
  });

  it("allows a burst of `burst` requests after an idle spell, then spaces them by 1/rate", () => {
    const c = clock();
    const b = new TokenBucket({ rate: 10, burst: 4, now: c.now });
    b.tryTake();
    c.advance(10_000);
    const t0 = c.now();
    assert.deepEqual(
      drain(b, c, 6).map((t) => t - t0),
      [0, 0, 0, 0, 100, 200],
    );
  });

  it("never grants more than burst + rate·T in any interval T, nor more than ⌊rate⌋ in any second", () => {
    const c = clock();
    const rate = 40;
    const burst = 4;
    const b = new TokenBucket({ rate, burst, now: c.now });
    const grants: number[] = [];
    let seed = 7;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    // Irregular demand: floods, idle spells and "stalls" (time jumps while callers wait).
    for (let round = 0; round < 2000; round++) {
      const callers = Math.floor(rand() * 6);
      for (let i = 0; i < callers; i++) if (b.tryTake()) grants.push(c.now());
      c.advance(rand() < 0.05 ? 1500 * rand() : 30 * rand());
    }
    assert.ok(grants.length > 1000);
    for (const T of [100, 250, 1000, 1000 + CAP_GUARD_MS, 5000]) {
      let j = 0;
      for (let i = 0; i < grants.length; i++) {
        while ((grants[i] as number) - (grants[j] as number) >= T) j++;
        const n = i - j + 1;
        assert.ok(n <= burst + (rate * T) / 1000, `interval ${T} ms held ${n}`);
        if (T === 1000 + CAP_GUARD_MS) assert.ok(n <= rate, `a second and its guard held ${n}`);
      }
    }
  });

  it("grants nothing before a pause ends and then only one token, not a burst", () => {
    const c = clock();
    const b = new TokenBucket({ rate: 10, burst: 5, now: c.now });
    c.advance(5000);
    const until = c.now() + 2000;
    b.pauseUntil(until);
    assert.equal(b.tryTake(), false);
    assert.equal(b.nextAt(), until);
    assert.deepEqual(
      drain(b, c, 2).map((t) => t - until),
      [0, 100],
    );
  });

  it("applies a lowered rate to later grants", () => {
    const c = clock();
    const b = new TokenBucket({ rate: 10, burst: 1, now: c.now });
    b.tryTake();
    b.setRate(2);
    assert.equal(b.rate, 2);
    const t0 = c.now();
    // The next slot was already due at the old rate. After it, the one-second cap (2 grants in
    // any second, counting the one at t0) and then the new 500 ms spacing apply.
    assert.deepEqual(
      drain(b, c, 4).map((t) => t - t0),
      [100, 1000 + CAP_GUARD_MS, 1500 + CAP_GUARD_MS, 2000 + 2 * CAP_GUARD_MS],
    );
  });

  it("rejects a non-positive rate instead of dividing by zero", () => {
    assert.throws(() => new TokenBucket({ rate: 0, burst: 1 }), RangeError);
  });

  it("serves waiters in arrival order", async () => {
    const b = new TokenBucket({ rate: 200, burst: 1 });
    const order: number[] = [];
    await Promise.all([0, 1, 2, 3, 4].map((i) => b.take().then(() => order.push(i))));
    assert.deepEqual(order, [0, 1, 2, 3, 4]);
  });

  it("releases its waiters with false when a pause begins, and rejects a cancelled waiter", async () => {
    const b = new TokenBucket({ rate: 0.5, burst: 1 });
    assert.equal(await b.take(), true);
    const ac = new AbortController();
    const cancelled = b.take(ac.signal);
    const paused = b.take();
    ac.abort(new Error("stop"));
    await assert.rejects(cancelled, /stop/);
    b.pauseUntil(Date.now() + 60_000);
    assert.equal(await paused, false);
  });

  it("after a 300 ms stall with six requests waiting, grants at most three at once (the first plus 20 ms of jitter) and then one every 10 ms", async (t) => {
    // A virtual clock: Date.now and the bucket's timer advance only when the test says so.
    t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 1_000_000 });
    const b = new TokenBucket({ rate: 100, burst: 10, now: () => Date.now() });
    assert.equal(await b.take(), true);
    const grants: number[] = [];
    const waiting = Array.from({ length: 6 }, () => b.take().then(() => grants.push(Date.now())));
    // The event loop is blocked for 300 ms: the clock moves on, the timer due in 10 ms cannot fire.
    t.mock.timers.setTime(Date.now() + 300);
    let all = false;
    void Promise.all(waiting).then(() => {
      all = true;
    });
    while (!all) {
      t.mock.timers.tick(1);
      await new Promise((r) => setImmediate(r));
    }
    // Without the guard the 10-token tolerance releases all six at once after the stall.
    const first = grants[0]!;
    const atOnce = grants.filter((g) => g === first).length;
    assert.ok(atOnce <= 3, `${atOnce} grants together after the stall`);
    for (let i = atOnce; i < grants.length; i++) {
      assert.equal(grants[i]! - grants[i - 1]!, 10, `grants at ${grants.join(", ")}`);
    }
  });

  it("with trackSends, holds a granted request's place in the one-second cap until it is sent", () => {
    const c = clock();
    const b = new TokenBucket({
      rate: 2,
      burst: 2,
      initialTokens: 2,
      now: c.now,
      trackSends: true,
    });
    assert.equal(b.tryTake(), true);
    assert.equal(b.tryTake(), true);
    // Two grants unsent: nothing more for as long as they are not sent, however long that is.
    c.advance(5000);
    assert.equal(b.tryTake(), false);
    b.sent();
    b.sent();
    assert.equal(b.tryTake(), false, "a send counts from its own moment, for a second");
    c.advance(1000);
    assert.equal(b.tryTake(), false, "and for the cap's guard beyond it");
    c.advance(CAP_GUARD_MS);
    assert.equal(b.tryTake(), true);
  });
});
