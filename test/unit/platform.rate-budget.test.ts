import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createLogger } from "../../src/log.ts";
import { defaultBurst, RateBudget } from "../../src/platform/rate-budget.ts";

/** Lets promise callbacks and `setImmediate` run (the virtual clock does not touch setImmediate). */
const settled = () => new Promise((r) => setImmediate(r));

function setup(rate = 40) {
  let t = 1_700_000_000_000;
  const lines: string[] = [];
  const logger = createLogger({ level: "info", write: (l) => lines.push(l) });
  const budget = new RateBudget({ rate, penaltyS: 300, logger, now: () => t });
  return { budget, lines, advance: (ms: number) => (t += ms), now: () => t };
}

/** A budget on Date.now, for tests whose mock timers move the clock. */
const onMockClock = (rate: number) =>
  new RateBudget({
    rate,
    penaltyS: 300,
    logger: createLogger({ level: "error" }),
    now: () => Date.now(),
  });

describe("defaultBurst", () => {
  it("is a tenth of a second's worth, at least one", () => {
    assert.equal(defaultBurst(40), 4);
    assert.equal(defaultBurst(190), 19);
    assert.equal(defaultBurst(5), 1);
  });
});

describe("RateBudget", () => {
  it("refuses to hand out a slot during a penalty and lets other endpoints go on", async () => {
    const { budget } = setup();
    budget.penalise("/v2/identity/controls", 2);
    assert.equal(await budget.take("/v2/identity/controls"), false);
    assert.equal(await budget.take("/v2/identity/identities"), true);
  });

  it("logs one warning per penalty, with the resume time, however many 429s arrive", () => {
    const { budget, lines, now } = setup();
    assert.equal(budget.penalise("/v2/identity/controls", 2), true);
    assert.equal(budget.penalise("/v2/identity/controls", 2), false);
    assert.equal(budget.penalise("/v2/identity/controls", 1), false);
    assert.equal(lines.length, 1);
    assert.match(lines[0] as string, /WARN/);
    assert.ok((lines[0] as string).includes(new Date(now() + 2000).toISOString()));
  });

  it("uses the configured penalty when the 429 carries no Retry-After", () => {
    const { budget, now } = setup();
    budget.penalise("/v2/identity/controls", undefined);
    const state = budget.snapshot()["/v2/identity/controls"];
    assert.equal(state?.pausedUntil, new Date(now() + 300_000).toISOString());
  });

  it("halves the endpoint's rate for each penalty, never below 1 rps", () => {
    const { budget, advance } = setup(3);
    budget.penalise("/v2/identity/controls", 1);
    assert.equal(budget.snapshot()["/v2/identity/controls"]?.rate, 1.5);
    advance(2000);
    budget.penalise("/v2/identity/controls", 1);
    assert.equal(budget.snapshot()["/v2/identity/controls"]?.rate, 1);
    advance(2000);
    budget.penalise("/v2/identity/controls", 1);
    const s = budget.snapshot()["/v2/identity/controls"];
    assert.deepEqual([s?.rate, s?.penalties], [1, 3]);
  });

  it("says the budget drops only when it does: a penalty at the floor of 1 rps says it stays at 1 request/s", () => {
    const { budget, lines, advance } = setup(2);
    budget.penalise("/v2/identity/controls", 1);
    advance(2000);
    budget.penalise("/v2/identity/controls", 1);
    assert.equal(lines.length, 2);
    assert.match(lines[0] as string, /its budget drops from 2 to 1 requests\/s/);
    assert.match(lines[1] as string, /its budget stays at 1 request\/s, the lowest a penalty sets/);
    assert.doesNotMatch(lines[1] as string, /drops from 1 to 1/);
  });

  it("opens again once the penalty has passed", async () => {
    const { budget, advance } = setup();
    budget.penalise("/v2/identity/controls", 2);
    advance(2001);
    await budget.waitOpen("/v2/identity/controls");
    assert.equal(budget.snapshot()["/v2/identity/controls"]?.pausedUntil, null);
    assert.equal(await budget.take("/v2/identity/controls"), true);
  });

  it("setRate changes one endpoint's budget from now on: over 2.2 s of its clock, never more than 5 grants in any second, and leaves the others alone", async (t) => {
    // A virtual clock: Date.now and the bucket's timers advance only when the test ticks them.
    t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 0 });
    const budget = onMockClock(40);
    const controls = "/v2/identity/controls";
    budget.setRate(controls, 5);
    assert.equal(budget.snapshot()[controls]?.rate, 5);
    const grants: number[] = [];
    while (Date.now() < 2200) {
      let granted = false;
      void budget.take(controls).then((g) => {
        granted = g;
      });
      await settled();
      while (!granted) {
        t.mock.timers.tick(1);
        await settled();
      }
      grants.push(Date.now());
      budget.sent(controls); // as the client does once the request is on the wire
    }
    assert.ok(grants.length >= 10, `${grants.length} grants in 2.2 s at 5/s`);
    for (let i = 5; i < grants.length; i++) {
      const span = grants[i]! - grants[i - 5]!;
      assert.ok(span >= 1000, `six grants within ${span} ms`);
    }
    budget.setRate(controls, 40);
    assert.equal(budget.snapshot()[controls]?.rate, 40);
    assert.equal(budget.snapshot()["/v2/identity/identities"], undefined);
  });

  it("holdUntil grants nothing on any endpoint, new or used, before the hold ends, and then goes on at the rate", async (t) => {
    t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 0 });
    const budget = onMockClock(40);
    assert.equal(await budget.take("/v2/identity/identities"), true);
    budget.sent("/v2/identity/identities");
    budget.holdUntil(1020);
    budget.holdUntil(500); // an earlier hold never shortens a later one
    const granted: Record<string, number> = {};
    for (const key of ["/v2/identity/identities", "/v2/identity/controls"]) {
      void budget.take(key).then((g) => {
        if (g) granted[key] = Date.now();
      });
    }
    for (let ms = 0; ms < 1100; ms++) {
      t.mock.timers.tick(1);
      await settled();
    }
    assert.deepEqual(Object.keys(granted).sort(), [
      "/v2/identity/controls",
      "/v2/identity/identities",
    ]);
    for (const at of Object.values(granted)) assert.ok(at >= 1020, `granted at ${at} ms`);
  });

  it("hands the last second's sends to another budget, whose cap counts them: at 5/s after 5 sends it grants nothing until the oldest is a second and the guard old", async (t) => {
    t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 10_000 });
    const first = onMockClock(5);
    const controls = "/v2/identity/controls";
    for (let i = 0; i < 5; i++) {
      assert.equal(await first.take(controls), true);
      first.sent(controls);
      t.mock.timers.tick(200);
      await settled();
    }
    t.mock.timers.tick(1500); // older sends than the last second are not handed on
    assert.equal(await first.take(controls), true);
    first.sent(controls);
    const sends = first.recentSends();
    assert.deepEqual(Object.keys(sends), [controls]);
    assert.deepEqual(sends[controls], [12_500]);

    const next = onMockClock(5);
    next.addSends({ [controls]: [12_100, 12_200, 12_300, 12_400, 12_500] });
    let grantedAt = 0;
    void next.take(controls).then((g) => {
      if (g) grantedAt = Date.now();
    });
    while (grantedAt === 0) {
      t.mock.timers.tick(1);
      await settled();
    }
    assert.ok(grantedAt >= 12_100 + 1020, `granted at ${grantedAt}`);
  });
});
