/**
 * The filter of ids a bounded source index refused (issue 30): it may answer "perhaps" for an id
 * never added, which only costs a database lookup, but never "certainly not" for one added, which
 * would lose the id's source row.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { PastIds } from "../../src/migration/read/past-ids.ts";
import { SourceIndex } from "../../src/migration/read/source-index.ts";

const ids = (n: number, prefix = "Other") =>
  Array.from({ length: n }, (_, i) => (i % 11 === 0 ? `${prefix}-${i}` : randomUUID()));

describe("PastIds", () => {
  it("never rules out an id it was given, filled to its plan or eight times past it", () => {
    for (const fill of [1, 8]) {
      const past = new PastIds(16 * 20_000);
      const added = ids(20_000 * fill);
      for (const id of added) past.add(id);
      assert.ok(
        added.every((id) => past.mayHold(id)),
        `filled ${fill}×`,
      );
    }
  });

  it("rules out all but about one in a thousand of the ids it was never given, at 16 bits an id", () => {
    const past = new PastIds(16 * 50_000);
    for (const id of ids(50_000)) past.add(id);
    const others = ids(100_000, "Never");
    const perhaps = others.filter((id) => past.mayHold(id)).length;
    assert.ok(perhaps < 300, `${perhaps} of 100,000 answered "perhaps"`);
  });
});

describe("SourceIndex's refused ids", () => {
  it("may hold past its bound exactly the ids it refused, and none while it refused none", () => {
    const index = new SourceIndex(100);
    const told = ids(1_000);
    assert.equal(index.mayHoldPast(told[0] as string), false);
    for (const id of told) index.set(id, { valid: true, userDisabled: true, adminDisabled: false });
    assert.ok(told.slice(100).every((id) => index.mayHoldPast(id)));
    assert.ok(index.pastBytes > 0);
  });
});
