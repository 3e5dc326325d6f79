/**
 * What the findings stream holds in memory (issue 30): fewer listing pages once the source is
 * expected past the source index's bound, so memory does not grow with the source.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  HELD_PAGES_BYTES,
  heldPagesBytes,
  PAST_BOUND_HELD_BYTES,
} from "../../src/migration/classify/findings-memory.ts";
import { SourceIndex } from "../../src/migration/read/source-index.ts";

describe("heldPagesBytes", () => {
  it("holds 32 MB of pages while the expected source rows fit the index, and reserves them there", () => {
    const index = new SourceIndex(100_000);
    assert.equal(heldPagesBytes({ expectedIds: 60_000 }, index), HELD_PAGES_BYTES);
    assert.ok(index.tableBytes >= 60_000 * 17, `${index.tableBytes} bytes`);
  });

  it("holds 2 MB once the expected source rows are past the index's bound", () => {
    const index = new SourceIndex(100_000);
    assert.equal(heldPagesBytes({ expectedIds: 1_150_000 }, index), PAST_BOUND_HELD_BYTES);
    assert.ok(index.tableBytes <= 100_000 * 23, `${index.tableBytes} bytes`);
  });

  it("holds what it is told to hold, and 32 MB when nothing is expected", () => {
    const index = new SourceIndex(10);
    assert.equal(heldPagesBytes({ memoryBytes: 0, expectedIds: 1_000 }, index), 0);
    assert.equal(heldPagesBytes({}, index), HELD_PAGES_BYTES);
  });
});
