import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  type ControlRecord,
  DRIFT_KINDS,
  type DriftKind,
  type Sandbox,
  type SeedReport,
  startSandbox,
  syntheticSeedRows,
} from "../../src/index.ts";
import { syntheticIdentities } from "../../src/shared.ts";
import { call, IDENTITIES, read, tokenFor, walk } from "../helpers/sandbox-http.ts";

const isClient = (c: ControlRecord) => c.set_by === "CLIENT" || c.set_by === "SET_BY_CLIENT";
const isService = (c: ControlRecord) => c.set_by === "SERVICE" || c.set_by === "SET_BY_SERVICE";
const sellOnly = (c: ControlRecord) => c.type === "SELL_ONLY";

interface Row {
  id: string;
  user_disabled: boolean;
  admin_disabled: boolean;
}

/** Recounts every seeded fact from the platform state, independently of the seeder's own counters. */
function recount(sandbox: Sandbox, rows: Row[]) {
  const drift = Object.fromEntries(DRIFT_KINDS.map((k) => [k, 0])) as Record<DriftKind, number>;
  let migrated = 0;
  let flagged = 0;
  let migrationClient = 0;
  let migrationService = 0;
  for (const r of rows) {
    const cs = sandbox.controlsOf(r.id);
    const fromFlag = cs.filter((c) => c.reason.startsWith("migrated from"));
    if (r.user_disabled || r.admin_disabled) flagged++;
    if (fromFlag.length > 0) migrated++;
    migrationClient += fromFlag.filter(isClient).length;
    migrationService += fromFlag.filter(isService).length;
    const clientSell = cs.filter((c) => sellOnly(c) && isClient(c));
    if (!r.user_disabled && clientSell.length > 0) drift.client_control_without_flag++;
    if (!r.admin_disabled && cs.some((c) => sellOnly(c) && isService(c)))
      drift.service_control_without_flag++;
    if (r.admin_disabled && r.user_disabled && fromFlag.length > 0 && !fromFlag.some(isService)) {
      drift.service_control_missing++;
    }
    if (cs.some((c) => isClient(c) && !c.is_overridable)) drift.client_not_overridable++;
    // The sandbox spells SET_BY_* by default; the drift spells the other way.
    if (fromFlag.some((c) => !c.set_by.startsWith("SET_BY_"))) drift.set_by_other_spelling++;
    if (cs.some((c) => c.set_by === "SET_BY_PARTNER")) drift.unknown_set_by++;
    if (r.user_disabled && clientSell.length === 2) drift.duplicate_client_sell_only++;
    if (cs.some((c) => c.type === "CLOSED")) drift.extra_closed++;
    if (cs.some((c) => c.type === "DORMANT")) drift.extra_dormant++;
    if (cs.some((c) => c.type === "FROZEN")) drift.extra_frozen++;
  }
  return { drift, migrated, flagged, migrationClient, migrationService };
}

describe("sandbox seeding and the legacy-flag transition", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await startSandbox({ rateLimitRps: 0, tokenRateLimitRps: 0 });
  });
  after(() => sandbox.close());

  it("migrates about migratedFraction of the flagged identities, CLIENT for user_disabled and SERVICE for admin_disabled", () => {
    sandbox.reset();
    const rows = [...syntheticIdentities(20_000, 11)];
    const report = sandbox.seedIdentities(rows, { migratedFraction: 0.5, seed: 11 });
    const truth = recount(sandbox, rows);
    assert.equal(report.identities, 20_000);
    assert.equal(report.flagged, truth.flagged);
    assert.equal(report.userDisabled, rows.filter((r) => r.user_disabled).length);
    assert.equal(report.adminDisabled, rows.filter((r) => r.admin_disabled).length);
    assert.equal(report.migrated, truth.migrated);
    assert.equal(report.unmigrated, report.flagged - report.migrated);
    assert.ok(
      Math.abs(report.migrated / report.flagged - 0.5) < 0.05,
      `${report.migrated}/${report.flagged}`,
    );
    assert.deepEqual(report.migrationControls, {
      client: truth.migrationClient,
      service: truth.migrationService,
    });
    assert.equal(report.driftIdentities, 0);
    for (const r of rows) {
      const cs = sandbox.controlsOf(r.id);
      for (const c of cs) {
        assert.equal(c.type, "SELL_ONLY");
        if (isClient(c)) {
          assert.ok(r.user_disabled);
          assert.equal(c.set_by, "SET_BY_CLIENT");
          assert.equal(c.is_overridable, true);
        } else {
          assert.ok(r.admin_disabled);
          assert.equal(c.set_by, "SET_BY_SERVICE");
          assert.equal(c.is_overridable, false);
        }
      }
      // Migration is per identity: a migrated identity has every flag converted.
      if (cs.length > 0)
        assert.equal(cs.length, Number(r.user_disabled) + Number(r.admin_disabled));
    }
    const integrity = sandbox.stats().integrity;
    assert.equal(integrity.activeClientSellOnly, truth.migrationClient);
    assert.equal(integrity.activeServiceSellOnly, truth.migrationService);
    assert.equal(integrity.identitiesWithDuplicateClientSellOnly, 0);
  });

  it("migrates nothing at fraction 0 and every flagged identity at fraction 1", () => {
    const rows = [...syntheticIdentities(3000, 5)];
    sandbox.reset();
    const none = sandbox.seedIdentities(rows, { migratedFraction: 0 });
    assert.equal(none.migrated, 0);
    assert.equal(none.controlsCreated, 0);
    sandbox.reset();
    const all = sandbox.seedIdentities(rows, { migratedFraction: 1 });
    assert.equal(all.migrated, all.flagged);
    assert.equal(all.controlsCreated, all.userDisabled + all.adminDisabled);
  });

  it("injects every kind of drift at driftFraction and reports exactly what it created", () => {
    sandbox.reset();
    const rows = [...syntheticIdentities(20_000, 2)];
    const report: SeedReport = sandbox.seedIdentities(rows, {
      migratedFraction: 0.5,
      driftFraction: 0.2,
      seed: 2,
    });
    const truth = recount(sandbox, rows);
    assert.ok(Math.abs(report.driftIdentities / 20_000 - 0.2) < 0.02);
    assert.equal(
      Object.values(report.drift).reduce((a, b) => a + b, 0),
      report.driftIdentities,
    );
    for (const kind of DRIFT_KINDS) {
      assert.ok(report.drift[kind] > 0, `drift ${kind} was injected`);
      assert.equal(truth.drift[kind], report.drift[kind], `drift ${kind} as recounted`);
    }
    assert.equal(truth.migrated, report.migrated);
    const integrity = sandbox.stats().integrity;
    assert.equal(
      integrity.identitiesWithDuplicateClientSellOnly,
      report.drift.duplicate_client_sell_only,
    );
    assert.equal(
      integrity.duplicateClientSellOnlyControls,
      report.drift.duplicate_client_sell_only,
    );
    assert.equal(
      integrity.activeClientSellOnly,
      report.migrationControls.client +
        report.drift.client_control_without_flag +
        report.drift.duplicate_client_sell_only,
    );
    assert.equal(
      integrity.activeServiceSellOnly,
      report.migrationControls.service + report.drift.service_control_without_flag,
    );
    assert.equal(sandbox.stats().controls.active, report.controlsCreated);
  });

  it("seeds the same identities and controls for the same seed", async () => {
    const shape = async (s: Sandbox) => {
      const token = await tokenFor(s);
      const items = await walk(s, token, IDENTITIES, { limit: "1000" });
      return items.map((i) => [
        i.id,
        i.created_at,
        i.status_details.active_controls.map(
          (c: ControlRecord) => `${c.type}/${c.set_by}/${c.is_overridable}`,
        ),
      ]);
    };
    const opts = {
      identities: 3000,
      seed: 9,
      driftFraction: 0.1,
      rateLimitRps: 0,
      tokenRateLimitRps: 0,
    };
    const a = await startSandbox(opts);
    const b = await startSandbox(opts);
    try {
      assert.deepEqual(await shape(a), await shape(b));
      assert.deepEqual(a.stats().integrity, b.stats().integrity);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("refuses a malformed row without adding anything, and skips ids already present", () => {
    sandbox.reset();
    assert.throws(
      () =>
        sandbox.seedIdentities([
          { id: "ok", user_disabled: true, admin_disabled: false },
          { id: "bad", user_disabled: "yes" as unknown as boolean, admin_disabled: false },
        ]),
      /identities\[1\]\.user_disabled must be a boolean/,
    );
    assert.throws(
      () =>
        sandbox.seedIdentities([
          { id: "x", user_disabled: false, admin_disabled: false, created_at: "soon" },
        ]),
      /created_at must be an ISO 8601 date-time/,
    );
    assert.equal(sandbox.stats().identities, 0);
    sandbox.seedIdentities([{ id: "ok", user_disabled: true, admin_disabled: false }]);
    const again = sandbox.seedIdentities([
      { id: "ok", user_disabled: false, admin_disabled: false },
      { id: "new", user_disabled: false, admin_disabled: false },
    ]);
    assert.equal(again.identities, 1);
    assert.equal(again.skippedExisting, 1);
  });

  it("accepts identity ids of up to 256 characters, as the tool does, and refuses longer ones", () => {
    const longest = "x".repeat(256);
    const report = sandbox.seedIdentities(
      [{ id: longest, user_disabled: true, admin_disabled: false }],
      { migratedFraction: 1 },
    );
    assert.equal(report.identities, 1);
    assert.equal(sandbox.controlsOf(longest).length, 1);
    assert.throws(
      () =>
        sandbox.seedIdentities([
          { id: "y".repeat(257), user_disabled: false, admin_disabled: false },
        ]),
      /identities\[0\]\.id must be a non-empty string of at most 256 characters/,
    );
  });

  it("seeds synthetic identities through the admin surface and reports the counts", async () => {
    sandbox.reset();
    const res = await read(
      await fetch(`${sandbox.adminUrl}/seed`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ count: 1000, seed: 4, migrated_fraction: 1, drift_fraction: 0 }),
      }),
    );
    assert.equal(res.status, 200);
    assert.equal(res.body.identities, 1000);
    assert.equal(res.body.migrated, res.body.flagged);
    const direct = [...syntheticSeedRows(1000, 4)].map((r) => r.id);
    const token = await tokenFor(sandbox);
    const listed = await walk(sandbox, token, IDENTITIES, { limit: "1000" });
    assert.deepEqual(new Set(listed.map((i) => i.id)), new Set(direct));
    const page = await call(sandbox, token, "GET", IDENTITIES, {
      query: { limit: "1", order: "ASC" },
    });
    assert.equal(page.body.items[0].created_at, "2021-01-01T00:00:00.000Z");
  });
});
