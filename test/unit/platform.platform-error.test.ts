import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  classify,
  describeFetchFailure,
  kindForStatus,
  PlatformError,
} from "../../src/platform/platform-error.ts";

describe("kindForStatus", () => {
  it("maps each status family to its kind", () => {
    const table: [number, string][] = [
      [400, "bad_request"],
      [401, "unauthorized"],
      [403, "forbidden"],
      [404, "not_found"],
      [409, "conflict"],
      [422, "bad_request"],
      [429, "rate_limited"],
      [500, "server"],
      [503, "server"],
      [302, "protocol"],
    ];
    for (const [status, kind] of table) assert.equal(kindForStatus(status), kind, String(status));
  });
});

describe("classify", () => {
  it("retries reads on network errors, timeouts and 5xx", () => {
    for (const kind of ["network", "timeout", "server"] as const) {
      assert.equal(classify(kind, "GET", true), "retryable");
    }
  });

  it("marks a write whose outcome is unknown as ambiguous", () => {
    for (const method of ["POST", "DELETE"] as const) {
      for (const kind of ["network", "timeout", "server", "cancelled"] as const) {
        assert.equal(classify(kind, method, true), "ambiguous", `${method} ${kind}`);
      }
    }
  });

  it("lets a write be re-sent when it never left (refused connection) or got 429", () => {
    assert.equal(classify("network", "POST", false), "retryable");
    assert.equal(classify("rate_limited", "POST", true), "retryable");
  });

  it("treats client errors as fatal", () => {
    for (const kind of ["bad_request", "forbidden", "not_found", "conflict", "protocol"] as const) {
      assert.equal(classify(kind, "GET", true), "fatal");
      assert.equal(classify(kind, "POST", true), "fatal");
    }
  });
});

describe("describeFetchFailure", () => {
  const fetchFailed = (code: string, message: string) =>
    Object.assign(new TypeError("fetch failed"), {
      cause: Object.assign(new Error(message), { code }),
    });

  it("knows a refused connection sent nothing and a dropped one may have", () => {
    const refused = describeFetchFailure(fetchFailed("ECONNREFUSED", "connect ECONNREFUSED"), {
      timedOut: false,
      cancelled: false,
    });
    assert.deepEqual([refused.kind, refused.sent], ["network", false]);
    const dropped = describeFetchFailure(fetchFailed("UND_ERR_SOCKET", "other side closed"), {
      timedOut: false,
      cancelled: false,
    });
    assert.deepEqual([dropped.kind, dropped.sent], ["network", true]);
    assert.equal(dropped.summary, "UND_ERR_SOCKET: other side closed");
  });

  it("prefers the caller's cancellation over the timeout", () => {
    const e = new DOMException("aborted", "AbortError");
    assert.equal(describeFetchFailure(e, { timedOut: true, cancelled: true }).kind, "cancelled");
    assert.equal(describeFetchFailure(e, { timedOut: true, cancelled: false }).kind, "timeout");
  });
});

describe("PlatformError", () => {
  it("names endpoint, status and detail in its message", () => {
    const e = new PlatformError({
      kind: "not_found",
      classification: "fatal",
      endpoint: "GET /v2/identity/identities/{id}",
      status: 404,
      title: "Not Found",
      detail: "identity not found",
    });
    assert.equal(e.message, "GET /v2/identity/identities/{id}: 404 Not Found: identity not found");
    assert.equal(JSON.parse(JSON.stringify(e)).kind, "not_found");
  });

  it("copies with new attempt bookkeeping without changing the original", () => {
    const e = new PlatformError({
      kind: "server",
      classification: "ambiguous",
      endpoint: "DELETE /v2/identity/controls",
      detail: "x",
    });
    const f = e.with({ attempts: 3, afterAmbiguousAttempt: true });
    assert.deepEqual(
      [e.attempts, f.attempts, f.afterAmbiguousAttempt, f.ambiguous],
      [1, 3, true, true],
    );
  });
});
