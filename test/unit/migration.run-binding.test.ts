/** Issue 26 §2: a resume is compared with the platform and source its run started with. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bindingDifferences, type RunBinding } from "../../src/migration/run/run-binding.ts";

const now: RunBinding = {
  api_url: "https://api.example.com",
  token_url: "https://auth.example.com/token",
  client_id: "c-1",
  source: {
    relation: "users",
    idColumn: "id",
    userDisabledColumn: "user_disabled",
    adminDisabledColumn: "admin_disabled",
  },
};

describe("bindingDifferences", () => {
  it("finds nothing when the resume points at the run's own platform and source", () => {
    assert.deepEqual(bindingDifferences({ ...now, rate: 5 }, now), []);
  });

  it("names the API URL, token URL and client id that differ, with the run's value and this invocation's", () => {
    const d = bindingDifferences(
      { ...now, api_url: "https://other", token_url: "https://other/token", client_id: "c-2" },
      now,
    );
    assert.deepEqual(d, [
      "API URL (--api-url): the run's https://other, this invocation's https://api.example.com",
      "token URL (--token-url): the run's https://other/token, this invocation's https://auth.example.com/token",
      "client id (--client-id): the run's c-2, this invocation's c-1",
    ]);
  });

  it("names a source relation or column that differs", () => {
    const d = bindingDifferences(
      { ...now, source: { ...now.source, relation: "accounts", userDisabledColumn: "u" } },
      now,
    );
    assert.equal(d.length, 2);
    assert.match(
      d[0] ?? "",
      /source relation \(--source-relation\): the run's accounts, this invocation's users/,
    );
    assert.match(d[1] ?? "", /user_disabled column/);
  });

  it("does not compare what a run of an older version did not record (no token URL)", () => {
    const { token_url: _t, ...older } = now;
    assert.deepEqual(bindingDifferences(older, { ...now, token_url: "https://elsewhere" }), []);
  });
});
