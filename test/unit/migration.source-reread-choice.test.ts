import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isExpectedClientControl } from "../../src/migration/execute/adoptable.ts";
import { chooseSourceReread } from "../../src/migration/execute/source-recheck.ts";
import type { IdentityControl } from "../../src/platform/index.ts";

describe("chooseSourceReread", () => {
  it("reads the pending identities by id while they are at most a tenth of the source's rows", () => {
    assert.equal(chooseSourceReread(100, 2000), "by-ids");
    assert.equal(chooseSourceReread(200, 2000), "by-ids");
  });
  it("reads the source in one pass once the pending identities are more than a tenth of its rows", () => {
    assert.equal(chooseSourceReread(201, 2000), "pass");
    assert.equal(chooseSourceReread(5000, 5000), "pass");
  });
  it("reads by id when the source's size is unknown (0)", () => {
    assert.equal(chooseSourceReread(1_000_000, 0), "by-ids");
  });
});

const control = (o: Partial<IdentityControl>): IdentityControl => ({
  id: "c1",
  type: "SELL_ONLY",
  setBy: "client",
  setByRaw: "CLIENT",
  isOverridable: true,
  reasonCode: null,
  reason: null,
  createdAt: null,
  deletedAt: null,
  ...o,
});

describe("isExpectedClientControl", () => {
  it("takes an active overridable CLIENT SELL_ONLY for a SELL_ONLY create", () => {
    assert.equal(isExpectedClientControl(control({}), "SELL_ONLY"), true);
  });
  it("refuses a non-overridable CLIENT SELL_ONLY", () => {
    assert.equal(isExpectedClientControl(control({ isOverridable: false }), "SELL_ONLY"), false);
  });
  it("refuses a SERVICE SELL_ONLY, another type, and a deleted control", () => {
    assert.equal(
      isExpectedClientControl(control({ setBy: "service", setByRaw: "SERVICE" }), "SELL_ONLY"),
      false,
    );
    assert.equal(isExpectedClientControl(control({ type: "CLOSED" }), "SELL_ONLY"), false);
    assert.equal(
      isExpectedClientControl(control({ deletedAt: "2026-01-01T00:00:00Z" }), "SELL_ONLY"),
      false,
    );
  });
});
