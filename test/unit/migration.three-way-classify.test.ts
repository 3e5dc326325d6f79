import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  classifyIdentity,
  dependsOnPlatformLegacy,
  type Finding,
  type IdentityState,
  type ObservedControl,
} from "../../src/migration/classify/classify.ts";
import { KEPT_RESTRICTED } from "../../src/migration/classify/restriction.ts";
import { keeperFirst, LEGACY_STILL_TRUE } from "../../src/migration/classify/three-way.ts";

const ctl = (id: string, setBy: "client" | "service", isOverridable: boolean): ObservedControl => ({
  controlId: id,
  type: "SELL_ONLY",
  setBy,
  setByRaw: setBy === "client" ? "SET_BY_CLIENT" : "SET_BY_SERVICE",
  isOverridable,
});
const client = (id: string) => ctl(id, "client", true);
const service = (id: string) => ctl(id, "service", false);

function classify(
  l: { u: boolean; a: boolean },
  p: { u: boolean | null; a: boolean | null } | null,
  controls: ObservedControl[],
  toolCreated: string[] = [],
  waitForPlatform = true,
): Finding[] {
  const state: IdentityState = {
    identityId: "id-1",
    source: { userDisabled: l.u, adminDisabled: l.a },
    platform: "found",
    controls,
    platformLegacy: p === null ? null : { userDisabled: p.u, adminDisabled: p.a },
    toolCreated: new Set(toolCreated),
    waitForPlatform,
  };
  return classifyIdentity(state);
}
const names = (fs: Finding[]) => fs.map((f) => f.finding).sort();

describe("three-way classification, user_disabled side", () => {
  it("L true, P true, no CLIENT SELL_ONLY: awaiting_platform_migration for the CLIENT control, and no create", () => {
    const fs = classify({ u: true, a: false }, { u: true, a: false }, []);
    assert.deepEqual(names(fs), ["awaiting_platform_migration"]);
    assert.equal(fs[0]?.expected?.setBy, "client");
    assert.equal(fs[0]?.create, false);
  });

  it("L true, P true, no CLIENT SELL_ONLY, --no-wait-for-platform: missing_client_control, created now", () => {
    const fs = classify({ u: true, a: true }, { u: true, a: true }, [], [], false);
    assert.deepEqual(
      fs.map((f) => [f.finding, f.create]),
      [
        ["missing_client_control", true],
        ["awaiting_platform_migration", false],
      ],
    );
  });

  it("L true, P false, no CLIENT SELL_ONLY: missing_client_control, to be created as before", () => {
    const fs = classify({ u: true, a: false }, { u: false, a: false }, []);
    assert.deepEqual(names(fs), ["missing_client_control"]);
    assert.equal(fs[0]?.create, true);
  });

  it("L true, P not read (null): missing_client_control, the two-way rule", () => {
    const fs = classify({ u: true, a: false }, null, []);
    assert.deepEqual(names(fs), ["missing_client_control"]);
    assert.equal(fs[0]?.create, true);
  });

  it("L false, P true, no CLIENT SELL_ONLY: platform_will_restrict, report only", () => {
    const fs = classify({ u: false, a: false }, { u: true, a: false }, []);
    assert.deepEqual(names(fs), ["platform_will_restrict"]);
    assert.equal(fs[0]?.create, false);
    assert.equal(fs[0]?.prunable, false);
  });

  it("L false, P true, CLIENT SELL_ONLY present: unexpected_client_control with the legacy detail, never prunable", () => {
    const fs = classify({ u: false, a: false }, { u: true, a: false }, [client("c1")]);
    assert.deepEqual(names(fs), ["unexpected_client_control"]);
    assert.equal(fs[0]?.detail, LEGACY_STILL_TRUE);
    assert.equal(fs[0]?.prunable, false);
  });

  it("L false, P false, CLIENT SELL_ONLY present: unexpected_client_control, prunable as before", () => {
    const fs = classify({ u: false, a: false }, { u: false, a: false }, [client("c1")]);
    assert.deepEqual(names(fs), ["unexpected_client_control"]);
    assert.equal(fs[0]?.prunable, true);
  });

  it("L true, P true, CLIENT SELL_ONLY present: in_sync (the platform's migration is done)", () => {
    assert.deepEqual(
      names(classify({ u: true, a: false }, { u: true, a: false }, [client("c1")])),
      ["in_sync"],
    );
  });

  it("two active CLIENT SELL_ONLY on a flagged identity: the tool's own is the prunable duplicate, the platform's is kept in_sync", () => {
    const fs = classify(
      { u: true, a: false },
      { u: true, a: false },
      [client("c1"), client("c2")],
      ["c1"],
    );
    assert.deepEqual(names(fs), ["duplicate_client_control", "in_sync"]);
    const dup = fs.find((f) => f.finding === "duplicate_client_control");
    assert.equal(dup?.observed?.controlId, "c1");
    assert.equal(dup?.prunable, true);
    assert.equal(fs.find((f) => f.finding === "in_sync")?.observed?.controlId, "c2");
  });

  it("three active CLIENT SELL_ONLY with P true and L false: two prunable duplicates and the last kept as unexpected, never pruned", () => {
    const fs = classify({ u: false, a: false }, { u: true, a: false }, [
      client("c1"),
      client("c2"),
      client("c3"),
    ]);
    assert.deepEqual(names(fs), [
      "duplicate_client_control",
      "duplicate_client_control",
      "unexpected_client_control",
    ]);
    const prunable = fs.filter((f) => f.prunable).map((f) => f.observed?.controlId);
    assert.deepEqual(prunable, ["c2", "c3"]);
    assert.equal(
      fs.find((f) => f.finding === "unexpected_client_control")?.detail,
      LEGACY_STILL_TRUE,
    );
  });

  it("a duplicate that is not overridable is reported but not prunable, and the overridable one is kept in_sync", () => {
    const fs = classify({ u: true, a: false }, { u: false, a: false }, [
      ctl("c1", "client", false),
      client("c2"),
    ]);
    assert.deepEqual(names(fs), ["duplicate_client_control", "in_sync"]);
    assert.equal(fs.find((f) => f.finding === "duplicate_client_control")?.prunable, false);
  });
});

describe("three-way classification, admin_disabled side", () => {
  it("L true, P true, no SERVICE SELL_ONLY: awaiting_platform_migration for the SERVICE control", () => {
    const fs = classify({ u: false, a: true }, { u: false, a: true }, []);
    assert.deepEqual(names(fs), ["awaiting_platform_migration"]);
    assert.equal(fs[0]?.expected?.setBy, "service");
    assert.equal(fs[0]?.create, false);
  });

  it("L true, P false, no SERVICE SELL_ONLY: platform_unaware_of_admin_flag", () => {
    assert.deepEqual(names(classify({ u: false, a: true }, { u: false, a: false }, [])), [
      "platform_unaware_of_admin_flag",
    ]);
  });

  it("L true, P not read: missing_service_control, the two-way rule", () => {
    assert.deepEqual(names(classify({ u: false, a: true }, null, [])), ["missing_service_control"]);
  });

  it("L false, P true, no SERVICE SELL_ONLY: source_behind_platform without an observed control", () => {
    const fs = classify({ u: false, a: false }, { u: false, a: true }, []);
    assert.deepEqual(names(fs), ["source_behind_platform"]);
    assert.equal(fs[0]?.observed, null);
  });

  it("L false, P true, SERVICE SELL_ONLY present: source_behind_platform naming that control, not unexpected_service_control", () => {
    const fs = classify({ u: false, a: false }, { u: false, a: true }, [service("s1")]);
    assert.deepEqual(names(fs), ["source_behind_platform"]);
    assert.equal(fs[0]?.observed?.controlId, "s1");
  });

  it("L false, P false, SERVICE SELL_ONLY present: unexpected_service_control as before", () => {
    assert.deepEqual(
      names(classify({ u: false, a: false }, { u: false, a: false }, [service("s1")])),
      ["unexpected_service_control"],
    );
  });

  it("L true, P true, SERVICE SELL_ONLY present: in_sync", () => {
    assert.deepEqual(
      names(classify({ u: false, a: true }, { u: false, a: true }, [service("s1")])),
      ["in_sync"],
    );
  });

  it("both sides awaiting: two awaiting_platform_migration findings, one per owner", () => {
    const fs = classify({ u: true, a: true }, { u: true, a: true }, []);
    assert.deepEqual(
      fs.map((f) => [f.finding, f.expected?.setBy]),
      [
        ["awaiting_platform_migration", "client"],
        ["awaiting_platform_migration", "service"],
      ],
    );
  });
});

describe("keeperFirst", () => {
  it("puts a not-overridable control first, then the platform's, then the tool's own, each by id", () => {
    const order = keeperFirst(
      [client("c1"), client("c0"), ctl("c9", "client", false), client("c5")],
      new Set(["c0", "c1"]),
    );
    assert.deepEqual(
      order.map((o) => o.controlId),
      ["c9", "c5", "c0", "c1"],
    );
  });

  it("a duplicate whose delete would leave a flagged identity unrestricted is never prunable", () => {
    // Both client controls are duplicates of each other; the kept one stays, so the extra may go.
    const fs = classify({ u: true, a: false }, { u: false, a: false }, [
      client("c1"),
      client("c2"),
    ]);
    assert.equal(fs.filter((f) => f.prunable).length, 1);
    assert.ok(fs.every((f) => f.detail !== KEPT_RESTRICTED));
  });
});

describe("which identities per-identity reads by id for the platform's legacy fields", () => {
  const state = (l: { u: boolean; a: boolean } | null, controls: ObservedControl[]) =>
    ({
      identityId: "id-1",
      source: l && { userDisabled: l.u, adminDisabled: l.a },
      platform: "found",
      controls,
    }) satisfies IdentityState;

  it("reads one whose flagged side holds no control of its owner: the field decides between missing and awaiting", () => {
    assert.equal(dependsOnPlatformLegacy(state({ u: false, a: true }, [])), true);
    assert.equal(dependsOnPlatformLegacy(state({ u: true, a: false }, [service("s1")])), true);
    assert.equal(dependsOnPlatformLegacy(state({ u: true, a: true }, [client("c1")])), true);
  });

  it("does not read one whose every flagged side holds a control of its owner, or of an unknown one", () => {
    assert.equal(dependsOnPlatformLegacy(state({ u: true, a: false }, [client("c1")])), false);
    assert.equal(
      dependsOnPlatformLegacy(state({ u: true, a: true }, [client("c1"), service("s1")])),
      false,
    );
    const unknown = { ...client("u1"), setBy: "unknown" as const, setByRaw: "WEIRD" };
    assert.equal(dependsOnPlatformLegacy(state({ u: true, a: false }, [unknown])), false);
  });

  it("does not read one not found, or without a source row", () => {
    assert.equal(
      dependsOnPlatformLegacy({ ...state({ u: true, a: false }, []), platform: "not_found" }),
      false,
    );
    assert.equal(dependsOnPlatformLegacy(state(null, [])), false);
  });
});
