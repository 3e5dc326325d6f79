import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { classifyIdentity, type ObservedControl } from "../../src/migration/classify.ts";
import { expectedControls, MIGRATION_MAPPING } from "../../src/migration/mapping.ts";

let n = 0;
const ctl = (setByRaw: string, isOverridable: boolean, type = "SELL_ONLY"): ObservedControl => {
  const up = setByRaw.toUpperCase();
  const setBy =
    up === "CLIENT" || up === "SET_BY_CLIENT"
      ? "client"
      : up === "SERVICE" || up === "SET_BY_SERVICE"
        ? "service"
        : "unknown";
  n += 1;
  return { controlId: `c${String(n).padStart(4, "0")}`, type, setBy, setByRaw, isOverridable };
};
const state = (
  u: boolean | null,
  a: boolean,
  controls: ObservedControl[],
  platform: "found" | "not_found" | "error" = "found",
) => ({
  identityId: "id-1",
  source: u === null ? null : { userDisabled: u, adminDisabled: a },
  platform,
  controls,
});
const kinds = (s: ReturnType<typeof state>) =>
  classifyIdentity(s)
    .map((f) => f.finding)
    .sort();

describe("expectedControls", () => {
  it("maps user_disabled to a client-set, overridable SELL_ONLY that the tool creates", () => {
    assert.deepEqual(expectedControls({ userDisabled: true, adminDisabled: false }), [
      MIGRATION_MAPPING[0],
    ]);
    assert.equal(MIGRATION_MAPPING[0]?.setBy, "client");
    assert.equal(MIGRATION_MAPPING[0]?.isOverridable, true);
    assert.equal(MIGRATION_MAPPING[0]?.owner, "tool");
  });

  it("maps admin_disabled to a service-set, non-overridable SELL_ONLY that the platform owns", () => {
    const [e] = expectedControls({ userDisabled: false, adminDisabled: true });
    assert.deepEqual(
      [e?.type, e?.setBy, e?.isOverridable, e?.owner],
      ["SELL_ONLY", "service", false, "platform"],
    );
  });

  it("maps both flags to both controls and no flag to none", () => {
    assert.equal(expectedControls({ userDisabled: true, adminDisabled: true }).length, 2);
    assert.equal(expectedControls({ userDisabled: false, adminDisabled: false }).length, 0);
  });
});

describe("classifyIdentity", () => {
  it("reports in_sync when the expected client control is present", () => {
    assert.deepEqual(kinds(state(true, false, [ctl("CLIENT", true)])), ["in_sync"]);
  });

  it("accepts the SET_BY_* spelling as the same party", () => {
    assert.deepEqual(
      kinds(state(true, true, [ctl("SET_BY_CLIENT", true), ctl("SET_BY_SERVICE", false)])),
      ["in_sync", "in_sync"],
    );
  });

  it("asks to create a missing client control and only reports a missing service control", () => {
    const f = classifyIdentity(state(true, true, []));
    assert.deepEqual(f.map((x) => [x.finding, x.create]).sort(), [
      ["missing_client_control", true],
      ["missing_service_control", false],
    ]);
  });

  it("reports an unexpected client control as prunable only when it is overridable", () => {
    const [a] = classifyIdentity(state(false, false, [ctl("CLIENT", true)]));
    const [b] = classifyIdentity(state(false, false, [ctl("CLIENT", false)]));
    assert.equal(a?.finding, "unexpected_client_control");
    assert.equal(a?.prunable, true);
    assert.equal(b?.finding, "unexpected_client_control");
    assert.equal(b?.prunable, false);
  });

  it("never marks a service control prunable", () => {
    const f = classifyIdentity(state(false, false, [ctl("SERVICE", true)]));
    assert.deepEqual(
      f.map((x) => [x.finding, x.prunable]),
      [["unexpected_service_control", false]],
    );
  });

  it("reports a client control that is not overridable as an attribute mismatch and creates nothing", () => {
    const f = classifyIdentity(state(true, false, [ctl("CLIENT", false)]));
    assert.deepEqual(
      f.map((x) => [x.finding, x.create]),
      [["attribute_mismatch", false]],
    );
  });

  it("reports an unknown set_by as an attribute mismatch, keeping the raw value", () => {
    const f = classifyIdentity(state(true, false, [ctl("SET_BY_PARTNER", true)]));
    assert.equal(f[0]?.finding, "attribute_mismatch");
    assert.match(f[0]?.detail ?? "", /SET_BY_PARTNER/);
    const g = classifyIdentity(state(false, false, [ctl("WEIRD", true)]));
    assert.equal(g[0]?.finding, "attribute_mismatch");
  });

  it("reports the second of two active client SELL_ONLY controls as a duplicate", () => {
    const f = classifyIdentity(state(true, false, [ctl("CLIENT", true), ctl("CLIENT", true)]));
    assert.deepEqual(f.map((x) => x.finding).sort(), ["in_sync", "unexpected_client_control"]);
    assert.match(
      f.find((x) => x.finding === "unexpected_client_control")?.detail ?? "",
      /duplicate/,
    );
  });

  it("shows other control types without acting on them", () => {
    const f = classifyIdentity(
      state(true, false, [ctl("SERVICE", false, "FROZEN"), ctl("CLIENT", true, "DORMANT")]),
    );
    assert.deepEqual(
      f.map((x) => x.finding),
      ["missing_client_control"],
    );
    assert.equal(f[0]?.otherActiveControls, "DORMANT:CLIENT;FROZEN:SERVICE");
    assert.deepEqual(classifyIdentity(state(false, false, [ctl("SERVICE", false, "CLOSED")])), []);
  });

  it("reports SELL_ONLY controls of an identity without a source row as unknown_to_source", () => {
    assert.deepEqual(kinds(state(null, false, [ctl("CLIENT", true), ctl("SERVICE", false)])), [
      "unknown_to_source",
      "unknown_to_source",
    ]);
  });

  it("reports a 404 as identity_not_found and a failed read as read_failed", () => {
    assert.deepEqual(kinds(state(true, false, [], "not_found")), ["identity_not_found"]);
    assert.deepEqual(kinds(state(true, false, [], "error")), ["read_failed"]);
  });
});
