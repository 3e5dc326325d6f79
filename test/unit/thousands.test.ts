import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { thousands } from "../../src/thousands.ts";

describe("thousands", () => {
  it("prints every safe integer exactly as toLocaleString('en-US') does", () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), (n) => {
        assert.equal(thousands(n), n.toLocaleString("en-US"));
      }),
      { numRuns: 2000, seed: 31 },
    );
    for (const n of [0, -0, 1, 999, 1000, -1000, 999_999, 1_000_000, Number.MAX_SAFE_INTEGER]) {
      assert.equal(thousands(n), n.toLocaleString("en-US"), String(n));
    }
  });

  it("leaves fractions and numbers past the safe integers to toLocaleString", () => {
    for (const n of [1234.5678, 2 ** 60, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.equal(thousands(n), n.toLocaleString("en-US"));
    }
  });
});
