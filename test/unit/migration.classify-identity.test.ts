import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  classifyIdentity,
  type Finding,
  type ObservedControl,
} from "../../src/migration/classify/classify.ts";
import { expectedControls, MIGRATION_MAPPING } from "../../src/migration/classify/mapping.ts";
import {
  KEPT_RESTRICTED,
  keptReason,
  mayDeleteSellOnly,
} from "../../src/migration/classify/restriction.ts";

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

type Flags = "no flag" | "user_disabled" | "admin_disabled" | "both flags";
const FLAGS: Record<Flags, { userDisabled: boolean; adminDisabled: boolean }> = {
  "no flag": { userDisabled: false, adminDisabled: false },
  user_disabled: { userDisabled: true, adminDisabled: false },
  admin_disabled: { userDisabled: false, adminDisabled: true },
  "both flags": { userDisabled: true, adminDisabled: true },
};

/** The platform states of the specification: active SELL_ONLY controls as [set_by, is_overridable]. */
const PLATFORM: Record<string, [string, boolean][]> = {
  nothing: [],
  "CLIENT/overridable": [["CLIENT", true]],
  "CLIENT/non-overridable": [["CLIENT", false]],
  "SERVICE/non-overridable": [["SERVICE", false]],
  "SERVICE/overridable": [["SERVICE", true]],
  "unknown set_by": [["SET_BY_PARTNER", true]],
  "both spellings": [
    ["SET_BY_CLIENT", true],
    ["SERVICE", false],
  ],
  "a duplicate": [
    ["CLIENT", true],
    ["SET_BY_CLIENT", true],
  ],
};

/**
 * The diff rules, as the README's findings section states them. A cell lists the findings of one
 * identity; in brackets what the tool does: (create) on apply/reconcile, (prune) on
 * `reconcile --prune`, (kept) kept by --prune with the outcome "kept: identity must stay
 * restricted". A finding without brackets is report only.
 */
// biome-ignore format: the table is the specification
const SPEC: [Flags, keyof typeof PLATFORM, string][] = [
  // flags            platform holds              findings
  ["no flag",        "nothing",                 "—"],
  ["no flag",        "CLIENT/overridable",      "unexpected_client_control (prune)"],
  ["no flag",        "CLIENT/non-overridable",  "unexpected_client_control"],
  ["no flag",        "SERVICE/non-overridable", "unexpected_service_control"],
  ["no flag",        "SERVICE/overridable",     "unexpected_service_control"],
  ["no flag",        "unknown set_by",          "attribute_mismatch"],
  ["no flag",        "both spellings",          "unexpected_client_control (prune) + unexpected_service_control"],
  ["no flag",        "a duplicate",             "duplicate_client_control (prune) + unexpected_client_control (prune)"],
  ["user_disabled",  "nothing",                 "missing_client_control (create)"],
  ["user_disabled",  "CLIENT/overridable",      "in_sync"],
  ["user_disabled",  "CLIENT/non-overridable",  "attribute_mismatch"],
  ["user_disabled",  "SERVICE/non-overridable", "missing_client_control (create) + unexpected_service_control"],
  ["user_disabled",  "SERVICE/overridable",     "missing_client_control (create) + unexpected_service_control"],
  ["user_disabled",  "unknown set_by",          "attribute_mismatch"],
  ["user_disabled",  "both spellings",          "in_sync + unexpected_service_control"],
  ["user_disabled",  "a duplicate",             "duplicate_client_control (prune) + in_sync"],
  ["admin_disabled", "nothing",                 "missing_service_control"],
  ["admin_disabled", "CLIENT/overridable",      "missing_service_control + unexpected_client_control (kept)"],
  ["admin_disabled", "CLIENT/non-overridable",  "missing_service_control + unexpected_client_control"],
  ["admin_disabled", "SERVICE/non-overridable", "in_sync"],
  ["admin_disabled", "SERVICE/overridable",     "attribute_mismatch"],
  ["admin_disabled", "unknown set_by",          "attribute_mismatch"],
  ["admin_disabled", "both spellings",          "in_sync + unexpected_client_control (prune)"],
  ["admin_disabled", "a duplicate",             "duplicate_client_control (prune) + missing_service_control + unexpected_client_control (kept)"],
  ["both flags",     "nothing",                 "missing_client_control (create) + missing_service_control"],
  ["both flags",     "CLIENT/overridable",      "in_sync + missing_service_control"],
  ["both flags",     "CLIENT/non-overridable",  "attribute_mismatch + missing_service_control"],
  ["both flags",     "SERVICE/non-overridable", "in_sync + missing_client_control (create)"],
  ["both flags",     "SERVICE/overridable",     "attribute_mismatch + missing_client_control (create)"],
  ["both flags",     "unknown set_by",          "attribute_mismatch + missing_service_control"],
  ["both flags",     "both spellings",          "in_sync + in_sync"],
  ["both flags",     "a duplicate",             "duplicate_client_control (prune) + in_sync + missing_service_control"],
];

const label = (f: Finding) =>
  f.finding +
  (f.create
    ? " (create)"
    : f.prunable
      ? " (prune)"
      : f.detail === KEPT_RESTRICTED
        ? " (kept)"
        : "");
const labels = (findings: Finding[]) => findings.map(label).sort().join(" + ") || "—";
const platformState = (name: string, spell: (setBy: string) => string = (x) => x) =>
  (PLATFORM[name] ?? []).map(([setBy, overridable]) => ctl(spell(setBy), overridable));
const sorted = (cell: string) => cell.split(" + ").sort().join(" + ");

describe("classifyIdentity: the specification table", () => {
  it("covers every combination of the two flags and the eight platform states exactly once", () => {
    const keys = SPEC.map(([f, p]) => `${f}|${p}`);
    assert.equal(new Set(keys).size, keys.length);
    assert.equal(keys.length, Object.keys(FLAGS).length * Object.keys(PLATFORM).length);
  });

  for (const [flags, platform, cell] of SPEC) {
    it(`${flags}, platform holds ${platform}: ${cell}`, () => {
      const f = classifyIdentity({
        identityId: "id-1",
        source: FLAGS[flags],
        platform: "found",
        controls: platformState(platform),
      });
      assert.equal(labels(f), sorted(cell));
    });
  }

  it("gives the same findings when every control uses the SET_BY_* spelling of its owner", () => {
    const long = (s: string) => (s === "CLIENT" || s === "SERVICE" ? `SET_BY_${s}` : s);
    for (const [flags, platform, cell] of SPEC) {
      const f = classifyIdentity({
        identityId: "id-1",
        source: FLAGS[flags],
        platform: "found",
        controls: platformState(platform, long),
      });
      assert.equal(labels(f), sorted(cell), `${flags}, ${platform}`);
    }
  });
});

describe("classifyIdentity", () => {
  it("never lets a SERVICE control stand in for the expected CLIENT one (identity A)", () => {
    const service = ctl("SERVICE", false);
    const f = classifyIdentity(state(true, false, [service]));
    const missing = f.find((x) => x.finding === "missing_client_control");
    const unexpected = f.find((x) => x.finding === "unexpected_service_control");
    assert.equal(missing?.create, true);
    assert.equal(missing?.expected?.setBy, "client");
    assert.equal(missing?.observed, null);
    assert.equal(unexpected?.observed, service);
    assert.equal(unexpected?.create, false);
    assert.equal(f.length, 2);
  });

  it("never lets a CLIENT control stand in for the expected SERVICE one, and keeps it under --prune (identity B)", () => {
    const client = ctl("CLIENT", true);
    const f = classifyIdentity(state(false, true, [client]));
    const unexpected = f.find((x) => x.finding === "unexpected_client_control");
    assert.deepEqual(f.map((x) => x.finding).sort(), [
      "missing_service_control",
      "unexpected_client_control",
    ]);
    assert.equal(unexpected?.observed, client);
    assert.equal(unexpected?.prunable, false);
    assert.equal(unexpected?.detail, "kept: identity must stay restricted");
  });

  it("prunes a client control of a flagged identity when another SELL_ONLY of any owner stays", () => {
    const f = classifyIdentity(
      state(false, true, [ctl("CLIENT", true), ctl("SET_BY_PARTNER", false)]),
    );
    assert.deepEqual(f.map(label).sort(), [
      "attribute_mismatch",
      "unexpected_client_control (prune)",
    ]);
    const g = classifyIdentity(state(false, true, [ctl("CLIENT", true), ctl("CLIENT", false)]));
    assert.deepEqual(g.map(label).sort(), [
      "duplicate_client_control (prune)",
      "missing_service_control",
      "unexpected_client_control",
    ]);
  });

  it("keeps one of several client controls of a flagged identity (the first by id) and prunes the others as duplicates", () => {
    const [a, b, c] = [ctl("CLIENT", true), ctl("CLIENT", true), ctl("SET_BY_CLIENT", true)];
    const f = classifyIdentity(state(false, true, [c!, a!, b!]));
    const byId = new Map(f.filter((x) => x.observed).map((x) => [x.observed?.controlId, label(x)]));
    assert.equal(byId.get(a!.controlId), "unexpected_client_control (kept)");
    assert.equal(byId.get(b!.controlId), "duplicate_client_control (prune)");
    assert.equal(byId.get(c!.controlId), "duplicate_client_control (prune)");
  });

  it("asks to create nothing when an unknown set_by sits where a CLIENT control is expected", () => {
    const f = classifyIdentity(state(true, false, [ctl("SET_BY_PARTNER", true)]));
    assert.deepEqual(
      f.map((x) => [x.finding, x.create]),
      [["attribute_mismatch", false]],
    );
    assert.match(f[0]?.detail ?? "", /SET_BY_PARTNER/);
    const g = classifyIdentity(state(false, false, [ctl("WEIRD", true)]));
    assert.equal(g[0]?.finding, "attribute_mismatch");
    assert.match(g[0]?.detail ?? "", /unknown set_by "WEIRD"/);
  });

  it("reports a same-owner near miss as an attribute mismatch that names both sides", () => {
    const f = classifyIdentity(state(true, false, [ctl("CLIENT", false)]));
    assert.deepEqual(
      f.map((x) => [x.finding, x.create]),
      [["attribute_mismatch", false]],
    );
    assert.equal(
      f[0]?.detail,
      "expected SELL_ONLY set_by CLIENT is_overridable true (from user_disabled), found SELL_ONLY set_by CLIENT is_overridable false",
    );
  });

  it("reports the second of two active client SELL_ONLY controls as duplicate_client_control", () => {
    const f = classifyIdentity(state(true, false, [ctl("CLIENT", true), ctl("CLIENT", true)]));
    assert.deepEqual(f.map((x) => x.finding).sort(), ["duplicate_client_control", "in_sync"]);
    assert.match(
      f.find((x) => x.finding === "duplicate_client_control")?.detail ?? "",
      /duplicate/,
    );
  });

  it("calls a second client control of a user_disabled identity duplicate_client_control even when neither matches exactly", () => {
    const f = classifyIdentity(state(true, false, [ctl("CLIENT", false), ctl("CLIENT", false)]));
    assert.deepEqual(f.map((x) => x.finding).sort(), [
      "attribute_mismatch",
      "duplicate_client_control",
    ]);
    assert.match(
      f.find((x) => x.finding === "duplicate_client_control")?.detail ?? "",
      /duplicate/,
    );
  });

  it("never marks a service control prunable", () => {
    const f = classifyIdentity(state(false, false, [ctl("SERVICE", true)]));
    assert.deepEqual(
      f.map((x) => [x.finding, x.prunable]),
      [["unexpected_service_control", false]],
    );
  });

  it("shows other control types without acting on them, and they never count as a restriction", () => {
    const f = classifyIdentity(
      state(true, false, [ctl("SERVICE", false, "FROZEN"), ctl("CLIENT", true, "DORMANT")]),
    );
    assert.deepEqual(
      f.map((x) => x.finding),
      ["missing_client_control"],
    );
    assert.equal(f[0]?.otherActiveControls, "DORMANT:CLIENT;FROZEN:SERVICE");
    assert.deepEqual(classifyIdentity(state(false, false, [ctl("SERVICE", false, "CLOSED")])), []);
    const g = classifyIdentity(
      state(false, true, [ctl("CLIENT", true), ctl("SERVICE", false, "FROZEN")]),
    );
    assert.deepEqual(g.map(label).sort(), [
      "missing_service_control",
      "unexpected_client_control (kept)",
    ]);
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

describe("mayDeleteSellOnly", () => {
  const admin = { userDisabled: false, adminDisabled: true };
  it("lets any SELL_ONLY go from an identity with no flag", () => {
    assert.equal(
      mayDeleteSellOnly({ userDisabled: false, adminDisabled: false }, ["c1"], "c1"),
      true,
    );
  });

  it("keeps the only SELL_ONLY of an identity with either flag true, and of one whose flags are unknown", () => {
    assert.equal(mayDeleteSellOnly(admin, ["c1"], "c1"), false);
    assert.equal(
      mayDeleteSellOnly({ userDisabled: true, adminDisabled: false }, ["c1"], "c1"),
      false,
    );
    assert.equal(mayDeleteSellOnly(null, ["c1"], "c1"), false);
    assert.equal(mayDeleteSellOnly(admin, [], "c1"), false);
  });

  it("lets a SELL_ONLY go from a flagged identity when another one stays", () => {
    assert.equal(mayDeleteSellOnly(admin, ["c1", "c2"], "c1"), true);
  });

  it("explains a kept control by the flags that are true", () => {
    assert.equal(
      keptReason(admin),
      "admin_disabled is true and no other active SELL_ONLY would stay after the delete",
    );
    assert.match(
      keptReason({ userDisabled: true, adminDisabled: true }),
      /^user_disabled and admin_disabled are true/,
    );
  });
});
