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
  it("reads delta-seconds and HTTP dates", () => {
    assert.equal(parseRetryAfter("2"), 2);
    assert.equal(parseRetryAfter("1.5"), 1.5);
    const now = Date.parse("Wed, 21 Oct 2015 07:27:00 GMT");
    assert.equal(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", now), 60);
  });

  it("returns undefined for an absent or unreadable header, so the configured penalty applies", () => {
    assert.equal(parseRetryAfter(null), undefined);
    assert.equal(parseRetryAfter("soon"), undefined);
  });
});
