import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  chooseStrategy,
  densityEstimate,
  type StrategyInputs,
} from "../../src/migration/read/state-strategy.ts";

const MILLION: StrategyInputs = {
  platformIdentities: 1_000_000,
  platformIdentitiesFrom: "the source's row count",
  sellOnlyIdentities: 60_000,
  sellOnlyFrom: "the listing of run 20260101-000000-abcd",
  candidates: 50_000,
  writes: 0,
  rate: 40,
  prune: false,
};

describe("chooseStrategy", () => {
  it("reads a million identities of which 6% hold a SELL_ONLY in about 60 listing requests instead of 1,000, when the candidates are fewer than the holders", () => {
    const c = chooseStrategy("auto", MILLION);
    assert.equal(c.strategy, "filtered");
    assert.deepEqual(c.costs, {
      bulk: 1000,
      filtered: 60,
      perIdentity: 50_000,
      byId: { filtered: 0, perIdentity: 0 },
    });
    assert.match(c.reason, /filtered ≈ 60 listing requests/);
    assert.match(c.reason, /bulk ≈ 1,000 listing requests/);
    assert.match(c.reason, /60,000 identities hold a SELL_ONLY, from the listing of run 2026/);
  });

  it("re-reading pending creates while waiting for the platform, reads each by id: filtered adds them to its pages, per-identity reads them by id instead of their controls", () => {
    const c = chooseStrategy("auto", {
      ...MILLION,
      candidates: 500,
      writes: 500,
      readsById: true,
      lackingKnown: 500,
    });
    assert.deepEqual(c.costs, {
      bulk: 1000,
      filtered: 560,
      perIdentity: 500,
      byId: { filtered: 500, perIdentity: 500 },
    });
    assert.equal(c.strategy, "per-identity");
    assert.match(c.reason, /per-identity 0 GETs on \/v2\/identity\/controls/);
    assert.match(c.reason, /\+ 500 GETs on \/v2\/identity\/identities\/\{id\}/);
  });

  it("charges per-identity reads to the controls path the creates share, and says so", () => {
    const c = chooseStrategy("auto", { ...MILLION, writes: 50_000 });
    assert.equal(c.strategy, "filtered");
    assert.match(
      c.reason,
      /per-identity 50,000 GETs on \/v2\/identity\/controls, the path the creates share, on top of up to 50,000 creates/,
    );
  });

  it("chooses per-identity when a handful of candidates cost fewer requests than any listing", () => {
    const c = chooseStrategy("auto", { ...MILLION, candidates: 12 });
    assert.equal(c.strategy, "per-identity");
    assert.match(c.reason, /^auto: per-identity 12 GETs/);
  });

  it("says its choice in one short line: the strategy, its requests and seconds at the rate", () => {
    const c = chooseStrategy("auto", { ...MILLION, candidates: 10_000, writes: 10_000 });
    assert.equal(c.short, "≈ 60 requests, 1.5 s at 40 rps (auto)");
    assert.match(
      chooseStrategy("bulk", MILLION).short,
      /^≈ 1,000 requests, \d+ s at \d+ rps \(--state bulk\)$/,
    );
  });

  it("re-reads the 10,000 creates of an approved plan with a SELL_ONLY listing of 60 requests, not 10,000 reads on the creates' path", () => {
    const c = chooseStrategy("auto", { ...MILLION, candidates: 10_000, writes: 10_000 });
    assert.equal(c.strategy, "filtered");
    assert.equal(c.costs.filtered, 60);
  });

  it("re-reads a few pending identities one by one rather than list a million", () => {
    const c = chooseStrategy("auto", { ...MILLION, candidates: 3, writes: 3 });
    assert.equal(c.strategy, "per-identity");
  });

  it("on a tie between a listing and per-identity reads, leaves the creates' budget alone", () => {
    const c = chooseStrategy("auto", {
      ...MILLION,
      platformIdentities: 5_000,
      sellOnlyIdentities: null,
      candidates: 5,
      writes: 5,
      readsById: false,
    });
    assert.equal(c.strategy, "bulk");
  });

  it("charges filtered one GET by id per candidate it will not list, so 120,000 candidates of which at most 60,000 hold a SELL_ONLY make bulk's 1,000 pages the cheaper read", () => {
    const c = chooseStrategy("auto", { ...MILLION, candidates: 120_000 });
    assert.equal(c.strategy, "bulk");
    assert.equal(c.costs.filtered, 60_060);
    assert.deepEqual(c.costs.byId, { filtered: 60_000, perIdentity: 60_000 });
    assert.match(
      c.reason,
      /^auto: bulk ≈ 1,000 listing requests .* ≤ per-identity .*; filtered ≈ 60 listing requests \+ 60,000 GETs on \/v2\/identity\/identities\/\{id\} of the candidates it will not list \(1,502 s;/,
    );
  });

  it("charges per-identity one GET by id per candidate expected to lack its control, which turns 3 candidates against 5 listing pages from per-identity to bulk", () => {
    const few = { ...MILLION, platformIdentities: 5_000, sellOnlyIdentities: null, candidates: 3 };
    const c = chooseStrategy("auto", few);
    assert.equal(c.strategy, "bulk");
    assert.equal(c.costs.perIdentity, 6);
    assert.match(
      c.reason,
      /per-identity 3 GETs on \/v2\/identity\/controls \(0\.1 s\) \+ 3 GETs on \/v2\/identity\/identities\/\{id\} for the legacy fields of the candidates expected to lack their control/,
    );
    // Known to hold their SELL_ONLY (three holders), the candidates cost their controls' GETs
    // only; a SELL_ONLY listing of one page, with nothing to read by id, is cheaper still.
    const held = chooseStrategy("auto", { ...few, sellOnlyIdentities: 3 });
    assert.equal(held.costs.perIdentity, 3);
    assert.equal(held.costs.filtered, 1);
    assert.equal(held.strategy, "filtered");
    // Without the reads by id (the re-read of pending actions), per-identity was the cheaper.
    assert.equal(chooseStrategy("auto", { ...few, readsById: false }).strategy, "per-identity");
  });

  it("does not charge the re-read of pending actions for reads by id it does not send", () => {
    const c = chooseStrategy("auto", { ...MILLION, candidates: 120_000, readsById: false });
    assert.equal(c.strategy, "filtered");
    assert.deepEqual(c.costs.byId, { filtered: 0, perIdentity: 0 });
  });

  it("never chooses per-identity for --prune, however few the candidates: it cannot see a stale control on an identity without a flag", () => {
    const c = chooseStrategy("auto", { ...MILLION, candidates: 0, prune: true });
    assert.equal(c.strategy, "filtered");
    assert.match(
      c.reason,
      /per-identity is ruled out: per-identity reads only identities with a flag true/,
    );
    const unknown = chooseStrategy("auto", {
      ...MILLION,
      sellOnlyIdentities: null,
      candidates: 0,
      prune: true,
    });
    assert.equal(unknown.strategy, "bulk");
  });

  it("prefers bulk, which proves existence, when filtered would not save a request", () => {
    const c = chooseStrategy("auto", {
      ...MILLION,
      platformIdentities: 900,
      sellOnlyIdentities: 800,
      candidates: 100,
    });
    assert.equal(c.strategy, "bulk");
  });

  it("compares bulk with per-identity alone when nothing tells how many identities hold a SELL_ONLY", () => {
    const c = chooseStrategy("auto", { ...MILLION, sellOnlyIdentities: null });
    assert.equal(c.strategy, "bulk");
    assert.equal(c.costs.filtered, null);
    assert.match(c.reason, /filtered: unknown cost/);
  });

  it("takes an explicit --state as given", () => {
    for (const s of ["bulk", "filtered", "per-identity"] as const) {
      assert.deepEqual(chooseStrategy(s, MILLION).strategy, s);
    }
  });
});

describe("densityEstimate", () => {
  it("scales the platform's size by how much longer the SELL_ONLY page's created_at span is", () => {
    assert.equal(
      densityEstimate({ items: 1000, spanMs: 500_000 }, { items: 1000, spanMs: 30_000 }, 1_000_000),
      60_000,
    );
  });

  it("cannot tell from a page whose identities share one created_at", () => {
    assert.equal(
      densityEstimate({ items: 1000, spanMs: 0 }, { items: 1000, spanMs: 10 }, 5000),
      null,
    );
  });
});
