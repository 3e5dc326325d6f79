import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  oauthErrorCode,
  parseProblem,
  parseRetryAfter,
} from "../../src/platform/problem-details.ts";

describe("parseProblem", () => {
  it("reads a problem+json body", () => {
    const p = parseProblem(
      JSON.stringify({
        type: "about:blank",
        title: "Not Found",
        status: 404,
        detail: "no such id",
      }),
    );
    assert.deepEqual(p, { type: "about:blank", title: "Not Found", detail: "no such id" });
  });

  it("reads an OAuth error body", () => {
    const text = JSON.stringify({ error: "invalid_scope", error_description: "not allowed" });
    assert.equal(parseProblem(text).detail, "not allowed");
    assert.equal(oauthErrorCode(text), "invalid_scope");
  });

  it("keeps a short excerpt of a non-JSON body and never throws", () => {
    const p = parseProblem(`<html>${"x".repeat(2000)}</html>`, "Bad Gateway");
    assert.ok(p.detail.length <= 501);
    assert.equal(p.title, "Bad Gateway");
    assert.equal(parseProblem("", "Service Unavailable").detail, "Service Unavailable");
  });
});

describe("parseRetryAfter", () => {
  it("reads a non-negative integer as seconds and each of the three HTTP date forms as seconds from now", () => {
    assert.equal(parseRetryAfter("2"), 2);
    assert.equal(parseRetryAfter(" 0 "), 0);
    const now = Date.parse("Wed, 21 Oct 2015 07:27:00 GMT");
    assert.equal(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", now), 60);
    assert.equal(parseRetryAfter("Wednesday, 21-Oct-15 07:28:00 GMT", now), 60);
    assert.equal(parseRetryAfter("Wed Oct 21 07:28:00 2015", now), 60);
  });

  it("returns undefined for an absent header and for every value that is neither a non-negative integer nor an HTTP date, so the penalty applies and never 0", () => {
    const now = Date.parse("Wed, 21 Oct 2015 07:27:00 GMT");
    for (const bad of [
      null,
      "soon",
      "-5",
      "-0",
      "1.5",
      "+3",
      "1e3",
      "",
      "2015-10-21T07:28:00Z",
      "5 s",
    ]) {
      assert.equal(parseRetryAfter(bad, now), undefined, String(bad));
    }
  });
});
