/**
 * A partitioned listing's phases, each on its own: the pure transitions `PartitionedListing`
 * makes all its changes of phase through, and the number of cursors a phase lets run.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  cursorTarget,
  firstListingState,
  type ListingState,
  nextListingState,
  windowed,
} from "../../src/migration/read/listing-phase.ts";

const pace = { latencyMs: 150, storeMs: 0, rate: 40, maxParallel: 8 };
const err = new Error("window failed");

describe("the partitioned listing's phases", () => {
  it("starts with one cursor that may split, or one to the end when one cursor is asked for", () => {
    assert.deepEqual(firstListingState(8), { phase: "single" });
    assert.deepEqual(firstListingState(1), { phase: "unsplittable" });
  });

  it("splits from a single cursor, never from one that cannot be split", () => {
    assert.deepEqual(nextListingState({ phase: "single" }, { kind: "split" }), { phase: "split" });
    assert.deepEqual(nextListingState({ phase: "split" }, { kind: "split" }), { phase: "split" });
    assert.deepEqual(nextListingState({ phase: "unsplittable" }, { kind: "split" }), {
      phase: "unsplittable",
    });
  });

  it("stays one cursor once an identity without created_at comes before any split", () => {
    const s = nextListingState({ phase: "single" }, { kind: "no_created_at" });
    assert.deepEqual(s, { phase: "unsplittable" });
    assert.equal(windowed(s), false);
    assert.equal(cursorTarget(s, pace), 1);
  });

  it("keeps the first failure, remembers how its cursors read, and ends failed with it", () => {
    let s: ListingState = { phase: "split" };
    s = nextListingState(s, { kind: "failed", err });
    s = nextListingState(s, { kind: "failed", err: new Error("a cursor cancelled after it") });
    assert.deepEqual(s, { phase: "stopping", cursors: "split", err });
    assert.equal(windowed(s), true, "a page already on its way is still placed in its window");
    assert.deepEqual(nextListingState(s, { kind: "drained" }), { phase: "failed", err });
  });

  it("lets a stopping single cursor lose its windows as a running one would", () => {
    const s = nextListingState({ phase: "single" }, { kind: "failed", err });
    const after = nextListingState(s, { kind: "no_created_at" });
    assert.deepEqual(after, { phase: "stopping", cursors: "unsplittable", err });
  });

  it("is done when every cursor returned without a failure, and stays so", () => {
    const done = nextListingState({ phase: "split" }, { kind: "drained" });
    assert.deepEqual(done, { phase: "done" });
    assert.deepEqual(nextListingState(done, { kind: "split" }), done);
    assert.deepEqual(nextListingState(done, { kind: "failed", err }), done);
  });

  it("asks for cursors by latency × rate with headroom, at most maxParallel, one before any latency", () => {
    assert.equal(cursorTarget({ phase: "single" }, { ...pace, latencyMs: null }), 1);
    assert.equal(cursorTarget({ phase: "single" }, { ...pace, maxParallel: 20 }), 9);
    assert.equal(cursorTarget({ phase: "split" }, pace), 8);
    assert.equal(cursorTarget({ phase: "split" }, { ...pace, storeMs: 300, maxParallel: 32 }), 16);
    assert.equal(cursorTarget({ phase: "unsplittable" }, pace), 1);
  });
});
