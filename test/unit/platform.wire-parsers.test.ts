import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PlatformError } from "../../src/platform/platform-error.ts";
import {
  normalizeSetBy,
  parseControl,
  parseControlsPage,
  parseIdentitiesPage,
  parseIdentity,
} from "../../src/platform/wire-parsers.ts";

const EP = "GET /v2/identity/controls";

const control = (over: Record<string, unknown> = {}) => ({
  id: "c-1",
  type: "SELL_ONLY",
  set_by: "CLIENT",
  is_overridable: true,
  reason_code: "OTHER",
  reason: "legacy flag",
  created_at: "2024-01-01T00:00:00Z",
  ...over,
});

function protocolError(message: string) {
  return (err: unknown) =>
    err instanceof PlatformError &&
    err.kind === "protocol" &&
    err.classification === "fatal" &&
    err.message === message;
}

describe("normalizeSetBy", () => {
  it("maps both spellings of client and service and nothing else", () => {
    assert.equal(normalizeSetBy("CLIENT"), "client");
    assert.equal(normalizeSetBy("SET_BY_CLIENT"), "client");
    assert.equal(normalizeSetBy("SERVICE"), "service");
    assert.equal(normalizeSetBy("SET_BY_SERVICE"), "service");
    assert.equal(normalizeSetBy("SET_BY_PARTNER"), "unknown");
    assert.equal(normalizeSetBy(""), "unknown");
  });
});

describe("parseControl", () => {
  it("normalises a seed-spelled record and keeps the raw set_by", () => {
    const c = parseControl(control(), EP);
    assert.deepEqual(c, {
      id: "c-1",
      type: "SELL_ONLY",
      setBy: "client",
      setByRaw: "CLIENT",
      isOverridable: true,
      reasonCode: "OTHER",
      reason: "legacy flag",
      createdAt: "2024-01-01T00:00:00Z",
      deletedAt: null,
    });
  });

  it("keeps unknown types and set_by values verbatim and ignores unknown fields", () => {
    const c = parseControl(
      control({ type: "QUARANTINED", set_by: "SET_BY_PARTNER", colour: "red" }),
      EP,
    );
    assert.equal(c.type, "QUARANTINED");
    assert.equal(c.setBy, "unknown");
    assert.equal(c.setByRaw, "SET_BY_PARTNER");
    assert.ok(!("colour" in c));
  });

  it("treats a missing set_by as unknown rather than guessing", () => {
    const { set_by: _drop, ...rest } = control();
    const c = parseControl(rest, EP);
    assert.deepEqual([c.setBy, c.setByRaw], ["unknown", ""]);
  });

  it("names the endpoint and field when a required field is missing or mistyped", () => {
    const { is_overridable: _drop, ...noFlag } = control();
    assert.throws(
      () => parseControl(noFlag, EP),
      protocolError(`${EP}: is_overridable is missing`),
    );
    assert.throws(
      () => parseControl(control({ id: 42 }), EP),
      protocolError(`${EP}: id must be a string, got number`),
    );
    assert.throws(
      () => parseControl(null, EP),
      protocolError(`${EP}: body must be an object, got null`),
    );
  });
});

describe("parseControlsPage", () => {
  it("points at the item index of a broken record", () => {
    const items = [control(), control(), control(), control({ id: undefined })];
    assert.throws(
      () => parseControlsPage({ items, next_page_cursor: "" }, EP),
      protocolError(`${EP}: items[3].id is missing`),
    );
  });

  it("requires items and treats an absent cursor as the last page", () => {
    assert.throws(
      () => parseControlsPage({ next_page_cursor: "x" }, EP),
      protocolError(`${EP}: items is missing`),
    );
    assert.deepEqual(parseControlsPage({ items: [] }, EP), { items: [], nextPageCursor: "" });
    assert.equal(
      parseControlsPage({ items: [], next_page_cursor: "abc" }, EP).nextPageCursor,
      "abc",
    );
  });
});

describe("parseIdentity and parseIdentitiesPage", () => {
  const IEP = "GET /v2/identity/identities";
  const identity = (over: Record<string, unknown> = {}) => ({
    id: "i-1",
    created_at: "2024-01-01T00:00:00Z",
    user_disabled: true,
    admin_disabled: false,
    status_details: { active_controls: [control()] },
    ...over,
  });

  it("normalises flags and active controls", () => {
    const i = parseIdentity(identity(), IEP);
    assert.equal(i.id, "i-1");
    assert.equal(i.userDisabled, true);
    assert.equal(i.adminDisabled, false);
    assert.equal(i.activeControls[0]?.setBy, "client");
  });

  it("keeps absent flags as null rather than false", () => {
    const i = parseIdentity(identity({ user_disabled: undefined, admin_disabled: null }), IEP);
    assert.deepEqual([i.userDisabled, i.adminDisabled], [null, null]);
  });

  it("refuses an identity without active_controls, since 'none' would cause duplicates", () => {
    assert.throws(
      () => parseIdentitiesPage({ items: [identity({ status_details: {} })] }, IEP),
      protocolError(`${IEP}: items[0].status_details.active_controls is missing`),
    );
    assert.throws(
      () =>
        parseIdentitiesPage({ items: [identity(), identity({ status_details: undefined })] }, IEP),
      protocolError(`${IEP}: items[1].status_details is missing`),
    );
  });

  it("names the nested control of a broken identity", () => {
    const bad = identity({
      status_details: { active_controls: [control(), control({ type: null })] },
    });
    assert.throws(
      () => parseIdentitiesPage({ items: [bad] }, IEP),
      protocolError(`${IEP}: items[0].status_details.active_controls[1].type is missing`),
    );
  });
});

describe("the page parsers' quick path", () => {
  const IEP = "GET /v2/identity/identities";
  const values: unknown[] = [
    undefined,
    null,
    "",
    "x",
    "SELL_ONLY",
    "SET_BY_SERVICE",
    0,
    1,
    true,
    false,
    [],
    {},
    [{}],
    "2024-01-01T00:00:00Z",
  ];
  const pick = <T>(list: readonly T[], n: number): T => list[n % list.length] as T;
  const outcome = (f: () => unknown) => {
    try {
      return { value: f() };
    } catch (err) {
      return { error: err instanceof PlatformError ? err.message : String(err) };
    }
  };

  it("gives exactly what the checked parser gives, values and refusals, on thousands of odd identities", () => {
    let n = 7;
    const next = () => {
      n = (n * 1103515245 + 12345) % 2147483648;
      return n;
    };
    const controlKeys = [
      "id",
      "type",
      "set_by",
      "is_overridable",
      "reason_code",
      "reason",
      "created_at",
      "deleted_at",
    ];
    const identityKeys = ["id", "created_at", "user_disabled", "admin_disabled", "status_details"];
    for (let round = 0; round < 4000; round++) {
      const c: Record<string, unknown> = {
        id: "c-1",
        type: "SELL_ONLY",
        set_by: "SET_BY_CLIENT",
        is_overridable: true,
        reason_code: "OTHER",
        reason: "r",
        created_at: "2024-01-01T00:00:00Z",
        deleted_at: null,
      };
      const i: Record<string, unknown> = {
        id: "i-1",
        created_at: "2024-01-01T00:00:00Z",
        user_disabled: false,
        admin_disabled: true,
        status_details: { active_controls: next() % 3 === 0 ? [] : [c] },
      };
      // One to three fields of the control or the identity get an odd value (or go).
      for (let k = next() % 3; k >= 0; k--) {
        const target = next() % 2 === 0 ? c : i;
        const keys = target === c ? controlKeys : identityKeys;
        const key = pick(keys, next());
        const value = pick(values, next());
        if (value === undefined) delete target[key];
        else target[key] = value;
      }
      const item = next() % 17 === 0 ? pick(values, next()) : i;
      const checked = outcome(() => parseIdentity(item, IEP, "items[0]."));
      const paged = outcome(() => parseIdentitiesPage({ items: [item] }, IEP).items[0]);
      assert.deepEqual(paged, checked, JSON.stringify(item));
      const checkedControl = outcome(() => parseControl(c, EP, "items[0]."));
      const pagedControl = outcome(() => parseControlsPage({ items: [c] }, EP).items[0]);
      assert.deepEqual(pagedControl, checkedControl, JSON.stringify(c));
    }
  });
});
