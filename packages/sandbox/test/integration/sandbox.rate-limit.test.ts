import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { type Sandbox, startSandbox } from "../../src/index.ts";
import {
  assertProblem,
  CONTROLS,
  call,
  IDENTITIES,
  requestToken,
  tokenFor,
} from "../helpers/sandbox-http.ts";

const RPS = 5;
const PENALTY_S = 2;

describe("sandbox rate limits", () => {
  let sandbox: Sandbox;
  let token: string;
  let identityId: string;

  before(async () => {
    sandbox = await startSandbox({
      identities: 20,
      rateLimitRps: RPS,
      rateWindowS: 1,
      penaltyS: PENALTY_S,
      tokenRateLimitRps: 0,
    });
    token = await tokenFor(sandbox);
    identityId = (await call(sandbox, token, "GET", IDENTITIES)).body.items[0].id;
  });
  after(() => sandbox.close());

  it("answers 429 with Retry-After past the limit, refuses everything to that endpoint during the penalty, then serves again", async () => {
    const list = () =>
      call(sandbox, token, "GET", CONTROLS, { query: { identity_id: identityId } });
    // Two windows' worth at once: exactly rps × window gets through.
    const burst = await Promise.all(Array.from({ length: 2 * RPS }, list));
    const penaltyStart = Date.now();
    assert.equal(burst.filter((r) => r.status === 200).length, RPS);
    const limited = burst.filter((r) => r.status === 429);
    assert.equal(limited.length, RPS);
    for (const r of limited) {
      assertProblem(r, 429);
      assert.ok(Number(r.headers.get("retry-after")) >= 1, "Retry-After in seconds");
    }
    assert.ok(limited.some((r) => r.headers.get("retry-after") === String(PENALTY_S)));

    const stats = sandbox.stats();
    assert.deepEqual(
      stats.penalised.map((p) => p.endpoint),
      [CONTROLS],
    );
    assert.ok(Date.parse(stats.penalised[0]!.until) > penaltyStart);

    // During the penalty: every request to the endpoint is refused, creates included, while
    // another endpoint is served normally.
    let refused = 0;
    while (Date.now() - penaltyStart < (PENALTY_S - 0.5) * 1000) {
      const r = await list();
      assertProblem(r, 429, /penalty/);
      refused++;
      const write = await call(sandbox, token, "POST", CONTROLS, {
        body: { identity_id: identityId, type: "SELL_ONLY", reason_code: "OTHER" },
      });
      assert.equal(write.status, 429);
      refused++;
      assert.equal(
        (await call(sandbox, token, "GET", IDENTITIES, { query: { limit: "1" } })).status,
        200,
      );
      await sleep(250);
    }
    const penaltyProbeEnd = Date.now();
    const during = sandbox.requestsIn({
      from: penaltyStart,
      to: penaltyProbeEnd,
      endpoint: CONTROLS,
    });
    assert.equal(during.served, 0, "zero requests reached the endpoint during the penalty");
    assert.ok(during.refusedByPenalty >= refused);
    assert.equal(sandbox.controlsOf(identityId).length, 0, "no refused create was committed");

    // The refusals did not extend the penalty: it ends PENALTY_S after it started.
    await sleep(Math.max(0, penaltyStart + PENALTY_S * 1000 + 100 - Date.now()));
    assert.equal((await list()).status, 200);
    assert.deepEqual(sandbox.stats().penalised, []);
    assert.ok((sandbox.stats().refusedByPenalty[CONTROLS] ?? 0) >= refused);
  });

  it("limits the token endpoint on its own budget", async () => {
    sandbox.setLimits({ tokenRateLimitRps: 1 });
    try {
      const first = await requestToken(sandbox);
      assert.equal(first.status, 200);
      const second = await requestToken(sandbox);
      assertProblem(second, 429);
      assert.equal(second.headers.get("retry-after"), String(PENALTY_S));
      // The API endpoints are unaffected by the token endpoint's penalty.
      assert.equal((await call(sandbox, token, "GET", `${IDENTITIES}/${identityId}`)).status, 200);
    } finally {
      sandbox.setLimits({ tokenRateLimitRps: 0 });
      sandbox.reset();
    }
  });
});
