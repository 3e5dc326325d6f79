/**
 * apply, then reconcile --prune, through the CLI while the sandbox's own migration runs
 * (`autoMigrateRate` 50, `duplicatePolicy` allow) over legacy drift, on every backend. The tool
 * waits for the platform (the default): it never races the platform's migration into a
 * duplicate, creates what the platform will never create, leaves what the platform's field would
 * bring back, and prunes seeded duplicates down to one.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type Sandbox, startSandbox } from "controls-sandbox";
import { sql } from "kysely";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { runCli } from "../helpers/cli.ts";
import { seededTarget } from "../helpers/cli-rig.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { sellOnlyOf } from "../helpers/three-way-truth.ts";
import { waitFor } from "../helpers/wait-for.ts";

const IDENTITIES = 3000;
const SEED = 33;

for (const backend of backends) {
  describe(`three-way apply and reconcile --prune while the platform migrates, on ${backend.name}`, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;
    const rows = [...syntheticIdentities(IDENTITIES, SEED)];
    const seededDuplicates: string[] = [];
    const out = mkdtempSync(join(tmpdir(), "cm-three-way-e2e-"));
    const cli = (args: string[]) =>
      runCli([...args, "--yes", "--state", "bulk", "--no-progress", ...target.args], env);

    before(async () => {
      sandbox = await startSandbox({
        rateLimitRps: 0,
        tokenRateLimitRps: 0,
        legacyDriftFraction: 0.2,
        autoMigrateRate: 50,
        duplicatePolicy: "allow",
      });
      target = await seededTarget(backend, { identities: IDENTITIES, seed: SEED });
      // Seeded last: the platform's migration starts on them now, as the runs are about to start.
      sandbox.seedIdentities(rows, { migratedFraction: 0.3, seed: SEED });
      for (const r of rows) {
        if (seededDuplicates.length === 3) break;
        if (r.user_disabled && sellOnlyOf(sandbox, r.id).client.length === 1) {
          sandbox.addControl(r.id, { type: "SELL_ONLY", is_overridable: true });
          seededDuplicates.push(r.id);
        }
      }
      assert.equal(seededDuplicates.length, 3);
      env = {
        API_BASE_URL: sandbox.apiUrl,
        OAUTH_TOKEN_URL: sandbox.tokenUrl,
        OAUTH_CLIENT_ID: sandbox.credentials.clientId,
        OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
        CONTROLS_WAIT_FOR_PLATFORM: "true",
      };
    });

    after(async () => {
      await sandbox?.close();
      await target?.drop();
      rmSync(out, { recursive: true, force: true });
    });

    it("apply then reconcile --prune end with one CLIENT SELL_ONLY at most per identity, every L-true P-false identity restricted, no create where P was true, seeded duplicates pruned to one", async (t) => {
      // The migrator takes up the seed at its next wake: wait for it to say so.
      await waitFor(
        "the platform's migration to have work left as apply starts",
        () => sandbox.stats().autoMigrate.left > 0,
      );
      const applied = await cli(["apply", "--out", join(out, "apply")]);
      assert.equal(applied.code, 0, applied.stderr);
      const reconciled = await cli(["reconcile", "--prune", "--out", join(out, "reconcile")]);
      // platform_will_restrict and friends are the client's to read: findings left.
      assert.equal(reconciled.code, 2, reconciled.stderr);
      assert.ok(sandbox.stats().autoMigrate.done > 0, "the platform migrated during the runs");

      const h = await target.open();
      const creates = await sql<{ identity_id: string }>`
        select identity_id from controls_migration.actions
        where action = 'create' and status = 'succeeded'`.execute(h.db);
      const deletes = await sql<{ control_key: string }>`
        select control_key from controls_migration.actions
        where action = 'delete' and status = 'succeeded'`.execute(h.db);
      await h.close();

      assert.ok(creates.rows.length > 0, "the tool created the controls the platform never will");
      for (const c of creates.rows) {
        // P never changes here (the drift is seeded), so P now is P when read.
        assert.equal(sandbox.legacyFieldsOf(c.identity_id).user_disabled, false, c.identity_id);
      }
      const lTruePFalse = rows.filter(
        (r) => r.user_disabled && !sandbox.legacyFieldsOf(r.id).user_disabled,
      );
      assert.ok(lTruePFalse.length > 0);
      for (const r of lTruePFalse) {
        assert.ok(sellOnlyOf(sandbox, r.id).client.length >= 1, `${r.id} holds its CLIENT control`);
      }
      const doubled = rows.filter((r) => sellOnlyOf(sandbox, r.id).client.length > 1);
      assert.deepEqual(
        doubled.map((r) => r.id),
        [],
      );
      for (const id of seededDuplicates) {
        assert.equal(sellOnlyOf(sandbox, id).client.length, 1, id);
      }
      assert.equal(deletes.rows.length >= seededDuplicates.length, true);
      // A migrated CLIENT control the platform's user_disabled would bring back is never pruned.
      const deleted = new Set(deletes.rows.map((d) => d.control_key));
      const migratedKept = rows
        .filter((r) => !r.user_disabled && sandbox.legacyFieldsOf(r.id).user_disabled)
        .flatMap((r) => sandbox.controlsOf(r.id, { includeDeleted: true }))
        .filter((c) => c.reason === "migrated from user_disabled");
      assert.ok(migratedKept.length > 0, "the drift gave migrated controls the client cleared");
      for (const c of migratedKept) assert.equal(deleted.has(c.id), false, c.id);
      const migrator = sandbox.stats().autoMigrate;
      t.diagnostic(
        `identities ${IDENTITIES}; L true P false ${lTruePFalse.length}, each restricted; creates ${creates.rows.length}, none where P was true; identities with two CLIENT SELL_ONLY ${doubled.length}; seeded duplicates ${seededDuplicates.length}, pruned to one; deletes ${deletes.rows.length}; migrated CLIENT controls kept ${migratedKept.length}; platform migrator done ${migrator.done}, left ${migrator.left}`,
      );
    });
  });
}
