import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DIFF_RECORD_COLUMNS, decodeDiffTuple } from "../../src/db/report-queries/diff-queries.ts";

describe("the diff row's one column list", () => {
  it("names each column once", () => {
    const names = DIFF_RECORD_COLUMNS.map((c) => c.name);
    assert.equal(new Set(names).size, names.length);
    assert.ok(names.length >= 24, `only ${names.length} columns`);
  });

  it("decodes a JSON tuple into a record keyed by those names, the time as a Date", () => {
    const tuple = DIFF_RECORD_COLUMNS.map((c, i) => (c.name === "at" ? 1_700_000_000_000 : i));
    const record = decodeDiffTuple(tuple) as unknown as Record<string, unknown>;
    assert.deepEqual(
      Object.keys(record),
      DIFF_RECORD_COLUMNS.map((c) => c.name),
    );
    assert.equal(record.id, 0);
    assert.equal(
      record.finding,
      DIFF_RECORD_COLUMNS.findIndex((c) => c.name === "finding"),
    );
    assert.deepEqual(record.at, new Date(1_700_000_000_000));
    const none = decodeDiffTuple(DIFF_RECORD_COLUMNS.map(() => null));
    assert.equal(none.at, null);
  });
});
