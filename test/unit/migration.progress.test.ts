/**
 * Progress figures are true (issue 29 §6): no percentage over 100, a rate never above the budget
 * in force, and a lower budget shown at the next line; plurals agree with their counts.
 */
import assert from "node:assert/strict";
import { EventEmitter, once } from "node:events";
import { describe, it } from "node:test";
import { createLogger } from "../../src/log.ts";
import { createProgress } from "../../src/migration/progress.ts";
import { progressCount, RateMeter, shownRate } from "../../src/migration/progress-rate.ts";
import { shownRate as statusRate } from "../../src/migration/run-status.ts";
import { noun } from "../../src/plural.ts";

/** A line progress whose lines are events: each test waits for the next line, never a timer. */
function lineProgress() {
  const lines = new EventEmitter();
  const logger = createLogger({ level: "info", write: (l) => lines.emit("line", l) });
  const progress = createProgress({ enabled: true, logger, tty: false, intervalMs: 20 });
  const next = async () => String((await once(lines, "line"))[0]);
  return { progress, next, lines };
}

describe("progress", () => {
  it("a phase that does more than its estimated total shows done/done (100.0%), never more than 100%", () => {
    const { progress, lines } = lineProgress();
    const seen: string[] = [];
    lines.on("line", (l: string) => seen.push(l));
    progress.start("apply", 185);
    progress.tick(205);
    progress.stop();
    assert.equal(seen.length, 1);
    assert.match(seen[0] ?? "", /apply: 205\/205 \(100\.0%\)/);
  });

  it("progressCount keeps the percentage at or below 100 and the total at or above done", () => {
    assert.equal(progressCount(205, 185), "205/205 (100.0%)");
    assert.equal(progressCount(1206, 725), "1206/1206 (100.0%)");
    assert.equal(progressCount(50, 200), "50/200 (25.0%)");
    assert.equal(progressCount(7, null), "7");
  });

  it("the rate a progress line shows never exceeds the budget in force, and a set-rate shows at the next line", async () => {
    const { progress, next } = lineProgress();
    // The progress timer is unref'd (it never holds a CLI open): this keeps the test's loop alive.
    const keepAlive = setInterval(() => {}, 60_000);
    let budget = 40;
    progress.start("apply", 10_000, { rateCap: () => budget });
    progress.tick(500); // a burst far above the budget
    assert.match(await next(), /, 40\/s/);
    budget = 4;
    assert.match(await next(), /, 4\/s/);
    progress.stop();
    clearInterval(keepAlive);
  });

  it("the progress line caps its rate with the very function status uses, so both show the same figure", () => {
    assert.equal(statusRate, shownRate, "one function, not a copy");
    const t0 = 2_000_000;
    const m = new RateMeter(t0);
    m.add(245, t0 + 100); // 49/s over five seconds, a burst after a pause
    const now = t0 + 5_000;
    assert.equal(m.perSecond(now), 49);
    assert.equal(m.perSecond(now, 40), shownRate(49, 40));
    assert.equal(m.perSecond(now, 40), 40);
    assert.equal(m.perSecond(now, 0), 49, "a budget of 0 (none known) caps nothing, as in status");
  });

  it("RateMeter counts only the last five seconds, so an early burst stops counting once it is older", () => {
    const t0 = 1_000_000;
    const m = new RateMeter(t0);
    m.add(100, t0 + 100);
    assert.equal(m.perSecond(t0 + 1000), 100);
    m.add(10, t0 + 9_000);
    assert.equal(m.perSecond(t0 + 10_000), 2);
    assert.equal(m.perSecond(t0 + 10_000, 1), 1);
  });

  it("noun takes the singular for a count of one and the plural otherwise", () => {
    assert.equal(`1 listing ${noun(1, "request")}`, "1 listing request");
    assert.equal(`1 ${noun(1, "page")}`, "1 page");
    assert.equal(`0 ${noun(0, "page")}`, "0 pages");
    assert.equal(`2 ${noun(2, "identity", "identities")}`, "2 identities");
  });
});
