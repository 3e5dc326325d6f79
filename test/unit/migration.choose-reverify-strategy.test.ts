import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  chooseReverifyStrategy,
  reverifyStrategyCosts,
  type StrategyCost,
} from "../../src/migration/reverify.ts";

describe("chooseReverifyStrategy", () => {
  it("lists the platform when that takes fewer requests than one read per pending identity", () => {
    const c = chooseReverifyStrategy(
      reverifyStrategyCosts({ actions: 3_000, identities: 3_000, platformIdentities: 20_000 }),
    );
    assert.equal(c.strategy, "listing");
    assert.equal(c.requests, 20);
    assert.match(
      c.reason,
      /^listing ≈ 20 requests on \/v2\/identity\/identities, cheapest against per-identity ≈ 3000 requests on \/v2\/identity\/controls \(the creates' budget\)$/,
    );
  });

  it("reads a few pending identities one by one rather than list a million", () => {
    const c = chooseReverifyStrategy(
      reverifyStrategyCosts({ actions: 4, identities: 3, platformIdentities: 1_000_000 }),
    );
    assert.equal(c.strategy, "per-identity");
    assert.equal(c.requests, 3);
  });

  it("on a tie, leaves the creates' budget alone", () => {
    const c = chooseReverifyStrategy(
      reverifyStrategyCosts({ actions: 5, identities: 5, platformIdentities: 5_000 }),
    );
    assert.equal(c.strategy, "listing");
  });

  it("takes a strategy added to the cost list when it is cheaper", () => {
    const costs: StrategyCost[] = [
      ...reverifyStrategyCosts({ actions: 900, identities: 900, platformIdentities: 500_000 }),
      // What a filtered listing (control_types=SELL_ONLY) would add: only the identities holding one.
      {
        strategy: "listing",
        requests: 40,
        path: "/v2/identity/identities?control_types=SELL_ONLY",
        sharesCreateBudget: false,
      },
    ];
    const c = chooseReverifyStrategy(costs);
    assert.equal(c.requests, 40);
  });
});
