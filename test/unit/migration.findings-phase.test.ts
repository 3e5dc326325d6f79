/**
 * The findings stream's phases, each on its own: the pure transitions `FindingsRun` makes all its
 * changes of phase through, and what each phase means for a page that arrives in it.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  FIRST_FINDINGS_STATE,
  type FindingsEvent,
  type FindingsState,
  failureOf,
  nextFindingsState,
  releases,
  sourceStored,
} from "../../src/migration/classify/findings-phase.ts";

const err = new Error("release failed");
const after = (...events: FindingsEvent[]): FindingsState =>
  events.reduce(nextFindingsState, FIRST_FINDINGS_STATE);

describe("the findings stream's phases", () => {
  it("holds pages until the source rows are stored, then classifies them as they arrive", () => {
    assert.equal(sourceStored(FIRST_FINDINGS_STATE), false);
    assert.equal(releases(FIRST_FINDINGS_STATE), false);
    const s = after({ kind: "source_stored" });
    assert.deepEqual(s, { phase: "releasing" });
    assert.equal(sourceStored(s), true);
    assert.equal(releases(s), true);
  });

  it("is over with the listing only once releasing: finish before the source rows changes nothing", () => {
    assert.deepEqual(after({ kind: "listing_over" }), { phase: "holding" });
    assert.deepEqual(after({ kind: "source_stored" }, { kind: "listing_over" }), {
      phase: "listing_over",
    });
  });

  it("keeps the first failure of the release and stops it; every later call throws it", () => {
    const s = after(
      { kind: "source_stored" },
      { kind: "failed", err },
      { kind: "failed", err: new Error("later") },
      { kind: "listing_over" },
    );
    assert.deepEqual(s, { phase: "failed", err });
    assert.equal(releases(s), false);
    assert.deepEqual(failureOf(s), { err });
  });

  it("stops the release once closed, remembering whether the source rows were stored", () => {
    const holding = after({ kind: "closed" });
    assert.deepEqual(holding, { phase: "closed", sourceStored: false, failure: null });
    const released = after(
      { kind: "source_stored" },
      { kind: "closed" },
      { kind: "source_stored" },
    );
    assert.deepEqual(released, { phase: "closed", sourceStored: true, failure: null });
    assert.equal(releases(released), false);
  });

  it("still reports a failure after the close, the first one only", () => {
    const failedThenClosed = after(
      { kind: "source_stored" },
      { kind: "failed", err },
      { kind: "closed" },
    );
    assert.deepEqual(failureOf(failedThenClosed), { err });
    const closedThenFailed = after(
      { kind: "source_stored" },
      { kind: "closed" },
      { kind: "failed", err },
      { kind: "failed", err: new Error("later") },
    );
    assert.deepEqual(failureOf(closedThenFailed), { err });
  });
});
