import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type ControlRecord,
  type Sandbox,
  startSandbox,
  syntheticSeedRows,
} from "../../src/index.ts";
import { syntheticIdentities } from "../../src/shared.ts";
import { call, IDENTITIES, tokenFor, walk } from "../helpers/sandbox-http.ts";

const isClient = (c: ControlRecord) => c.set_by === "CLIENT" || c.set_by === "SET_BY_CLIENT";
const isService = (c: ControlRecord) => c.set_by === "SERVICE" || c.set_by === "SET_BY_SERVICE";
const activeSellOnly = (cs: ControlRecord[], owner: (c: ControlRecord) => boolean) =>
  cs.filter((c) => c.type === "SELL_ONLY" && c.deleted_at === undefined && owner(c));

/** Waits for the sandbox's own stats to say something (the migrator's progress), polling them. */
async function untilStats(sandbox: Sandbox, test: (s: ReturnType<Sandbox["stats"]>) => boolean) {
  const deadline = Date.now() + 20_000;
  while (!test(sandbox.stats())) {
    if (Date.now() > deadline)
      throw new Error(`stats never matched: ${JSON.stringify(sandbox.stats().autoMigrate)}`);
    await new Promise((r) => setImmediate(r));
  }
}

describe("sandbox legacy drift (--legacy-drift-fraction)", () => {
  it("changes the platform's legacy fields of exactly 20% of 1000 identities against the seeded flags, half turned on and half turned off", async () => {
    const sandbox = await startSandbox({
      identities: 1000,
      legacyDriftFraction: 0.2,
      rateLimitRps: 0,
    });
    try {
      let on = 0;
      let off = 0;
      const rows = [...syntheticIdentities(1000, 1)];
      for (const r of rows) {
        const p = sandbox.legacyFieldsOf(r.id);
        const changed = [
          [r.user_disabled, p.user_disabled],
          [r.admin_disabled, p.admin_disabled],
        ].filter(([l, q]) => l !== q);
        assert.ok(changed.length <= 1, `${r.id} changed in both fields`);
        if (changed[0]?.[1] === true) on++;
        if (changed[0]?.[1] === false) off++;
      }
      assert.deepEqual({ on, off }, { on: 100, off: 100 });
    } finally {
      await sandbox.close();
    }
  });

  it("answers the drifted legacy fields in the identities listing", async () => {
    const sandbox = await startSandbox({
      identities: 300,
      legacyDriftFraction: 0.5,
      rateLimitRps: 0,
    });
    try {
      const token = await tokenFor(sandbox);
      const listed = await walk(sandbox, token, IDENTITIES, {});
      assert.equal(listed.length, 300);
      for (const item of listed as {
        id: string;
        user_disabled: boolean;
        admin_disabled: boolean;
      }[]) {
        const p = sandbox.legacyFieldsOf(item.id);
        assert.deepEqual(
          [item.user_disabled, item.admin_disabled],
          [p.user_disabled, p.admin_disabled],
        );
      }
      const seeded = new Map([...syntheticIdentities(300, 1)].map((r) => [r.id, r]));
      const differing = (listed as { id: string; user_disabled: boolean }[]).filter(
        (i) => seeded.get(i.id)?.user_disabled !== i.user_disabled,
      );
      assert.ok(differing.length > 0, "some listed user_disabled differs from the seed");
    } finally {
      await sandbox.close();
    }
  });
});

describe("sandbox background migration (--auto-migrate-rate)", () => {
  it("gives every identity whose legacy field is true its mapped control, reason 'migrated from ...', and reports done and left", async () => {
    const sandbox = await startSandbox({
      identities: 500,
      migratedFraction: 0,
      legacyDriftFraction: 0.2,
      autoMigrateRate: 400,
      rateLimitRps: 0,
    });
    try {
      const rows = [...syntheticIdentities(500, 1)];
      const due = rows.filter((r) => {
        const p = sandbox.legacyFieldsOf(r.id);
        return p.user_disabled || p.admin_disabled;
      }).length;
      assert.ok(due > 0);
      await untilStats(sandbox, (s) => s.autoMigrate.left === 0 && s.autoMigrate.done > 0);
      assert.equal(sandbox.stats().autoMigrate.done, due);
      assert.equal(sandbox.stats().autoMigrate.rate, 400);
      for (const r of rows) {
        const p = sandbox.legacyFieldsOf(r.id);
        const cs = sandbox.controlsOf(r.id);
        const client = activeSellOnly(cs, isClient);
        const service = activeSellOnly(cs, isService);
        assert.equal(client.length, p.user_disabled ? 1 : 0, r.id);
        assert.equal(service.length, p.admin_disabled ? 1 : 0, r.id);
        if (p.user_disabled) {
          assert.deepEqual(
            [client[0]?.reason, client[0]?.is_overridable],
            ["migrated from user_disabled", true],
          );
        }
        if (p.admin_disabled) {
          assert.deepEqual(
            [service[0]?.reason, service[0]?.is_overridable],
            ["migrated from admin_disabled", false],
          );
        }
      }
    } finally {
      await sandbox.close();
    }
  });

  it("starts only when migrateAtRate is called, with its work list taken then, and stops at rate 0", async () => {
    const sandbox = await startSandbox({ identities: 300, migratedFraction: 0, rateLimitRps: 0 });
    try {
      const due = [...syntheticIdentities(300, 1)].filter((r) => {
        const p = sandbox.legacyFieldsOf(r.id);
        return p.user_disabled || p.admin_disabled;
      }).length;
      assert.ok(due > 1, `due ${due}`);
      assert.deepEqual(sandbox.stats().autoMigrate, { rate: 0, done: 0, left: 0 });
      // A rate whose first tick does one identity: the rest is left when the call returns.
      sandbox.migrateAtRate(1);
      assert.equal(sandbox.stats().autoMigrate.rate, 1);
      assert.equal(sandbox.stats().autoMigrate.done + sandbox.stats().autoMigrate.left, due);
      assert.ok(sandbox.stats().autoMigrate.left > 0);
      sandbox.migrateAtRate(0);
      const stopped = sandbox.stats().autoMigrate;
      assert.equal(stopped.rate, 0);
      sandbox.migrateAtRate(10_000);
      await untilStats(sandbox, (s) => s.autoMigrate.left === 0);
      assert.equal(sandbox.stats().autoMigrate.rate, 10_000);
      assert.throws(() => sandbox.migrateAtRate(-1), /autoMigrateRate must be a number/);
    } finally {
      await sandbox.close();
    }
  });

  for (const policy of ["allow", "reject"] as const) {
    it(`under --duplicate-policy ${policy}, a CLIENT SELL_ONLY created while the identity waits in the migration's queue ${policy === "allow" ? "is duplicated" : "is not duplicated"}`, async () => {
      const sandbox = await startSandbox({
        autoMigrateRate: 100,
        duplicatePolicy: policy,
        rateLimitRps: 0,
      });
      try {
        const rows = [...syntheticSeedRows(4000, 3)].filter((r) => r.user_disabled).slice(0, 300);
        sandbox.seedIdentities(rows, { migratedFraction: 0 });
        await untilStats(sandbox, (s) => s.autoMigrate.left > 0 && s.autoMigrate.done > 0);
        const last = rows[rows.length - 1]?.id as string;
        sandbox.addControl(last, { type: "SELL_ONLY", is_overridable: true });
        await untilStats(sandbox, (s) => s.autoMigrate.left === 0);
        const client = activeSellOnly(sandbox.controlsOf(last), isClient);
        assert.equal(client.length, policy === "allow" ? 2 : 1);
      } finally {
        await sandbox.close();
      }
    });
  }

  it("reports the migrator's progress on the admin surface (GET /__sandbox/stats)", async () => {
    const sandbox = await startSandbox({
      identities: 200,
      migratedFraction: 0,
      autoMigrateRate: 1000,
      rateLimitRps: 0,
    });
    try {
      await untilStats(sandbox, (s) => s.autoMigrate.left === 0 && s.autoMigrate.done > 0);
      const res = await call(sandbox, undefined, "GET", "/__sandbox/stats");
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.autoMigrate, {
        rate: 1000,
        done: sandbox.stats().autoMigrate.done,
        left: 0,
      });
    } finally {
      await sandbox.close();
    }
  });
});
