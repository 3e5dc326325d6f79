/**
 * Progress figures are true (issue 29 §6): no percentage over 100, a rate never above the budget
 * in force, and a lower budget shown at the next line; plurals agree with their counts.
 */
import assert from "node:assert/strict";
import { EventEmitter, once } from "node:events";
import { describe, it } from "node:test";
import { loadPlatformConfig } from "../../src/config.ts";
import { createLogger } from "../../src/log.ts";
import { createProgress } from "../../src/migration/steer/progress.ts";
import {
  endpointBudget,
  progressCount,
  RateMeter,
  shownRate,
} from "../../src/migration/steer/progress-rate.ts";
import { shownRate as statusRate } from "../../src/migration/steer/run-status.ts";
import { createPlatformClient, PATHS } from "../../src/platform/index.ts";
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

  it("a read phase's rate cap is the budget in force on its endpoint, read anew after a set-rate", () => {
    const config = loadPlatformConfig(
      {},
      {
        API_BASE_URL: "http://127.0.0.1:9",
        OAUTH_TOKEN_URL: "http://127.0.0.1:9/oauth2/token",
        OAUTH_CLIENT_ID: "client-1",
        OAUTH_CLIENT_SECRET: "s3cret-value-xyz",
      },
    );
    const client = createPlatformClient(config, { scopes: [] });
    try {
      const controls = endpointBudget(client, PATHS.controls);
      const byId = endpointBudget(client, PATHS.identity);
      assert.equal(controls(), null, "no budget known before the endpoint's first use: no cap");
      client.setRate(PATHS.controls, 3);
      assert.equal(controls(), 3);
      assert.equal(byId(), null, "each phase reads its own endpoint's budget");
      client.setRate(PATHS.identity, 7);
      assert.deepEqual([controls(), byId()], [3, 7]);
      assert.equal(endpointBudget(client, "/v2/not-an-endpoint")(), null);
    } finally {
      client.close();
    }
  });

  it("RateMeter counts only the last ten seconds (status's window too), so an early burst stops counting once it is older", () => {
    const t0 = 1_000_000;
    const m = new RateMeter(t0);
    m.add(100, t0 + 100);
    assert.equal(m.perSecond(t0 + 1000), 100);
    m.add(20, t0 + 19_000);
    assert.equal(m.perSecond(t0 + 20_000), 2);
    assert.equal(m.perSecond(t0 + 20_000, 1), 1);
  });

  it("noun takes the singular for a count of one and the plural otherwise", () => {
    assert.equal(`1 listing ${noun(1, "request")}`, "1 listing request");
    assert.equal(`1 ${noun(1, "page")}`, "1 page");
    assert.equal(`0 ${noun(0, "page")}`, "0 pages");
    assert.equal(`2 ${noun(2, "identity", "identities")}`, "2 identities");
  });
});
