/**
 * The sandbox's `updated_at` (issue 55) over real HTTP: what moves it under each
 * `updatedAtPolicy` (all, identity-fields, none), so that a reconcile reading only what changed
 * (`updated_at.gte`) can be rehearsed against an honest and a dishonest platform; and the
 * `updated_at.*` filters as the published schema describes them, to the millisecond.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Sandbox, startSandbox, type UpdatedAtPolicy } from "../../src/index.ts";
import { admin, adminOk } from "../helpers/sandbox-api.ts";
import {
  assertProblem,
  CONTROLS,
  call,
  createControl,
  IDENTITIES,
  tokenFor,
  walkRepeated,
} from "../helpers/sandbox-http.ts";

const PAST = "2020-01-01T00:00:00.000Z";
const QUIET = { rateLimitRps: 0, tokenRateLimitRps: 0 };

/** The ids `GET /v2/identity/identities` lists for these filters, walked to the end, sorted. */
async function listed(sandbox: Sandbox, token: string, params: [string, string][]) {
  const { items } = await walkRepeated<{ id: string }>(sandbox, token, params);
  return items.map((i) => i.id).sort();
}

/** Identities created in the past and never changed since, without flags unless asked. */
function seedPast(sandbox: Sandbox, ids: readonly string[], userDisabled = false) {
  const rows = ids.map((id) => ({
    id,
    user_disabled: userDisabled,
    admin_disabled: false,
    created_at: PAST,
  }));
  sandbox.seedIdentities(rows, { migratedFraction: userDisabled ? 1 : 0, driftFraction: 0 });
}

/** Polls the sandbox's stats until the background migration has nothing left and did some. */
async function untilMigrated(sandbox: Sandbox): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { done, left } = sandbox.stats().autoMigrate;
    if (done > 0 && left === 0) return;
    if (Date.now() > deadline) throw new Error(`migration never ended: ${done} done, ${left} left`);
    await new Promise((r) => setImmediate(r));
  }
}

/** Which of the changes each policy lets move updated_at. */
const MOVES: Record<UpdatedAtPolicy, { control: boolean; legacy: boolean }> = {
  all: { control: true, legacy: true },
  "identity-fields": { control: false, legacy: true },
  none: { control: false, legacy: false },
};

const CASES: [string, UpdatedAtPolicy | undefined, UpdatedAtPolicy][] = [
  ["the default", undefined, "all"],
  ["all", "all", "all"],
  ["identity-fields", "identity-fields", "identity-fields"],
  ["none", "none", "none"],
];

for (const [label, option, policy] of CASES) {
  const moves = MOVES[policy];
  const says = (moved: boolean) => (moved ? "lists" : "does not list");
  describe(`sandbox updated_at under ${label} (updatedAtPolicy ${policy})`, () => {
    let sandbox: Sandbox;
    let token: string;
    before(async () => {
      sandbox = await startSandbox({ ...QUIET, updatedAtPolicy: option });
      seedPast(sandbox, ["created", "legacy", "untouched"]);
      seedPast(sandbox, ["deleted", "admin-added", "admin-deleted"], true);
      token = await tokenFor(sandbox);
    });
    after(() => sandbox.close());

    const check = async (id: string, since: string, moved: boolean) => {
      const changed = await listed(sandbox, token, [["updated_at.gte", since]]);
      assert.equal(changed.includes(id), moved, `updated_at.gte=${since} lists ${changed}`);
      assert.ok(!changed.includes("untouched"));
      const read = await call(sandbox, token, "GET", `${IDENTITIES}/${id}`);
      assert.equal(read.status, 200, read.text);
      if (moved) assert.ok(Date.parse(read.body.updated_at) >= Date.parse(since));
      else assert.equal(read.body.updated_at, PAST, "updated_at stays created_at");
      return read.body;
    };

    it(`after a control is created through the API, updated_at.gte=<before> ${says(moves.control)} the identity`, async () => {
      const since = new Date().toISOString();
      await createControl(sandbox, token, "created", "CLOSED");
      await check("created", since, moves.control);
    });

    it(`after a control is deleted through the API, updated_at.gte=<before> ${says(moves.control)} the identity`, async () => {
      const [control] = sandbox.controlsOf("deleted");
      assert.ok(control?.is_overridable, "the seed migrated user_disabled to a client control");
      const since = new Date().toISOString();
      const res = await call(sandbox, token, "DELETE", CONTROLS, {
        query: { control_id: control.id, reason: "test" },
      });
      assert.equal(res.status, 200, res.text);
      await check("deleted", since, moves.control);
    });

    it(`after a control is added, or one deleted, through the admin surface, updated_at.gte=<before> ${says(moves.control)} the identity`, async () => {
      const since = new Date().toISOString();
      await adminOk(sandbox, "POST", "/identities/admin-added/controls", { type: "DORMANT" });
      await check("admin-added", since, moves.control);
      const [control] = sandbox.controlsOf("admin-deleted");
      await adminOk(sandbox, "DELETE", `/controls/${control?.id}`);
      await check("admin-deleted", since, moves.control);
    });

    it(`after a legacy field changes (PATCH /__sandbox/identities/{id}/legacy), updated_at.gte=<before> ${says(moves.legacy)} the identity`, async () => {
      const since = new Date().toISOString();
      await adminOk(sandbox, "PATCH", "/identities/legacy/legacy", { admin_disabled: true });
      const body = await check("legacy", since, moves.legacy);
      assert.equal(body.admin_disabled, true);
    });
  });
}

describe("sandbox updated_at: the platform's own migration and the policy at runtime", () => {
  for (const policy of ["all", "identity-fields"] as const) {
    it(`under ${policy}, the platform's background migration ${policy === "all" ? "moves" : "does not move"} updated_at`, async () => {
      const sandbox = await startSandbox({
        ...QUIET,
        updatedAtPolicy: policy,
        autoMigrateRate: 1000,
      });
      try {
        const token = await tokenFor(sandbox);
        const since = new Date().toISOString();
        sandbox.seedIdentities(
          [{ id: "flagged", user_disabled: true, admin_disabled: false, created_at: PAST }],
          { migratedFraction: 0, driftFraction: 0 },
        );
        await untilMigrated(sandbox);
        assert.equal(sandbox.controlsOf("flagged").length, 1, "the migration created a control");
        const changed = await listed(sandbox, token, [["updated_at.gte", since]]);
        assert.deepEqual(changed, policy === "all" ? ["flagged"] : []);
      } finally {
        await sandbox.close();
      }
    });
  }

  it("PUT /__sandbox/limits {updated_at_policy} applies from the next change on, and a value outside all, identity-fields, none is a 400 naming it", async () => {
    const sandbox = await startSandbox(QUIET);
    try {
      seedPast(sandbox, ["a", "b"]);
      const token = await tokenFor(sandbox);
      await adminOk(sandbox, "PUT", "/limits", { updated_at_policy: "none" });
      const since = new Date().toISOString();
      await createControl(sandbox, token, "a", "CLOSED");
      sandbox.setLegacyFields("a", { user_disabled: true });
      assert.deepEqual(await listed(sandbox, token, [["updated_at.gte", since]]), []);
      await adminOk(sandbox, "PUT", "/limits", { updatedAtPolicy: "all" });
      await createControl(sandbox, token, "b", "CLOSED");
      assert.deepEqual(await listed(sandbox, token, [["updated_at.gte", since]]), ["b"]);
      const bad = await admin(sandbox, "PUT", "/limits", { updated_at_policy: "sometimes" });
      assert.equal(bad.status, 400, bad.text);
      assert.match(bad.body.detail, /updatedAtPolicy must be all, identity-fields, none/);
      await assert.rejects(
        startSandbox({ updatedAtPolicy: "honest" as UpdatedAtPolicy }),
        /updatedAtPolicy must be all, identity-fields, none, got "honest"/,
      );
    } finally {
      await sandbox.close();
    }
  });

  it("a legacy field set to the value it already has is no change: updated_at stays", async () => {
    const sandbox = await startSandbox(QUIET);
    try {
      seedPast(sandbox, ["same"]);
      const token = await tokenFor(sandbox);
      await adminOk(sandbox, "PATCH", "/identities/same/legacy", { user_disabled: false });
      const read = await call(sandbox, token, "GET", `${IDENTITIES}/same`);
      assert.equal(read.body.updated_at, PAST);
    } finally {
      await sandbox.close();
    }
  });
});

describe("sandbox updated_at filters, as the published schema describes them", () => {
  let sandbox: Sandbox;
  let token: string;
  const at = (ms: number) => `2024-05-01T10:00:00.${String(ms).padStart(3, "0")}Z`;
  before(async () => {
    sandbox = await startSandbox(QUIET);
    sandbox.seedIdentities(
      [122, 123, 124].map((ms) => ({
        id: `u${ms}`,
        user_disabled: false,
        admin_disabled: false,
        created_at: PAST,
        updated_at: at(ms),
      })),
      { migratedFraction: 0, driftFraction: 0 },
    );
    token = await tokenFor(sandbox);
  });
  after(() => sandbox.close());

  it("gte, gt, lte, lt and eq bound at the millisecond: gte and lte include the instant, gt and lt exclude it, eq is only it", async () => {
    const cases: [[string, string][], string[]][] = [
      [[["updated_at.gte", at(123)]], ["u123", "u124"]],
      [[["updated_at.gt", at(123)]], ["u124"]],
      [[["updated_at.lte", at(123)]], ["u122", "u123"]],
      [[["updated_at.lt", at(123)]], ["u122"]],
      [[["updated_at.eq", at(123)]], ["u123"]],
      [
        [
          ["updated_at.gte", at(122)],
          ["updated_at.lt", at(124)],
        ],
        ["u122", "u123"],
      ],
      [
        [
          ["updated_at.gt", at(123)],
          ["updated_at.lt", at(124)],
        ],
        [],
      ],
    ];
    for (const [params, expected] of cases) {
      assert.deepEqual(await listed(sandbox, token, params), expected, JSON.stringify(params));
    }
  });

  it("takes any RFC 3339 spelling of an instant: an offset, trailing zeros, and finer digits applied exactly", async () => {
    const cases: [[string, string][], string[]][] = [
      [[["updated_at.eq", "2024-05-01T12:00:00.123+02:00"]], ["u123"]],
      [[["updated_at.eq", "2024-05-01T10:00:00.123000000Z"]], ["u123"]],
      [[["updated_at.eq", "2024-05-01T10:00:00.1225Z"]], []],
      [[["updated_at.gte", "2024-05-01T10:00:00.1225Z"]], ["u123", "u124"]],
      [[["updated_at.gt", "2024-05-01T10:00:00.1225Z"]], ["u123", "u124"]],
      [[["updated_at.lte", "2024-05-01T10:00:00.1235Z"]], ["u122", "u123"]],
      [[["updated_at.lt", "2024-05-01T10:00:00.1235Z"]], ["u122", "u123"]],
      [[["updated_at.gte", "2024-05-01T10:00:00Z"]], ["u122", "u123", "u124"]],
    ];
    for (const [params, expected] of cases) {
      assert.deepEqual(await listed(sandbox, token, params), expected, JSON.stringify(params));
    }
  });

  it("the updated_at an identity answers after a change, given back as updated_at.eq, lists exactly it", async () => {
    const live = await startSandbox(QUIET);
    try {
      seedPast(live, ["live", "other"]);
      const liveToken = await tokenFor(live);
      await createControl(live, liveToken, "live", "CLOSED");
      const read = await call(live, liveToken, "GET", `${IDENTITIES}/live`);
      assert.notEqual(read.body.updated_at, PAST);
      const eq = await listed(live, liveToken, [["updated_at.eq", read.body.updated_at]]);
      assert.deepEqual(eq, ["live"]);
    } finally {
      await live.close();
    }
  });

  it("answers an invalid date-time with a 400 problem+json {type, title, status, detail} naming the parameter", async () => {
    const bad: [string, string][] = [
      ["updated_at.gte", "yesterday"],
      ["updated_at.gt", "2024-05-01"],
      ["updated_at.lt", "2024-05-01T10:00:00"],
      ["updated_at.lte", "2024-13-01T00:00:00Z"],
      ["updated_at.eq", "2024-02-30T00:00:00Z"],
      ["updated_at.gte", "1714557600000"],
    ];
    for (const [name, value] of bad) {
      const res = await call(sandbox, token, "GET", IDENTITIES, { query: { [name]: value } });
      assertProblem(res, 400, new RegExp(`${name.replace(".", "\\.")} must be an RFC 3339`));
    }
  });
});
