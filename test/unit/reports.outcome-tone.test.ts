/**
 * report.html colours outcomes by meaning (issue 29 §2): done green, nothing to do and not on the
 * platform grey, failed red; and a create answered 404 reads "not on the platform" in summaries.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { outcomeLabel } from "../../src/migration/run/run-summary.ts";
import { outcomeMeaning, outcomeTone } from "../../src/reports/html/outcome-tone.ts";

describe("outcome colours and words", () => {
  it("done is green, skipped and 404 creates grey, other failures red, unknown outcomes purple", () => {
    assert.equal(outcomeTone("succeeded:created"), "bar-ok");
    assert.equal(outcomeTone("succeeded:adopted"), "bar-ok");
    assert.equal(outcomeTone("skipped:dry_run"), "bar-muted");
    assert.equal(outcomeTone("failed:identity_not_found"), "bar-muted");
    assert.equal(outcomeTone("failed:conflict"), "bar-bad");
    assert.equal(outcomeTone("ambiguous"), "bar-odd");
    assert.equal(outcomeTone("pending"), "bar-warn");
  });

  it("a create answered 404 is named not on the platform, never a failure, in report.html and summaries", () => {
    assert.match(
      outcomeMeaning("failed:identity_not_found"),
      /not on the platform \(404\): no failure/,
    );
    assert.equal(outcomeMeaning("failed:conflict"), "failed: needs attention");
    assert.equal(outcomeLabel("failed", "identity_not_found"), "not on the platform (404)");
    assert.equal(outcomeLabel("failed", "conflict"), "failed (conflict)");
  });
});
