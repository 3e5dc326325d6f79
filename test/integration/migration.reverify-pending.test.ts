import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { type Sandbox, startSandbox } from "controls-sandbox";
import { sql } from "kysely";
import { loadPlatformConfig } from "../../src/config.ts";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { silentLogger } from "../../src/log.ts";
import { reverifyPending } from "../../src/migration/execute/reverify.ts";
import {
  createPlatformClient,
  type PlatformClient,
  WRITE_SCOPES,
} from "../../src/platform/index.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";

const ROWS = [...syntheticIdentities(30, 17)].map((r) => ({
  ...r,
  user_disabled: false,
  admin_disabled: false,
}));
const [A, B, C, D, E, F, G] = ROWS.map((r) => r.id) as [
  string,
  string,
  string,
  string,
  string,
  string,
  string,
];
const GONE = "00000000-0000-4000-8000-00000000dead";
const RUN = "20260101-000000-beef";

for (const backend of backends) {
  for (const strategy of ["bulk", "per-identity"] as const) {
    describe(`reverifyPending by ${strategy} on ${backend.name}`, () => {
      let sb: Sandbox;
      let h: TestDatabase;
      let client: PlatformClient;
      let deletable: string;
      let kept: string;

      before(async () => {
        sb = await startSandbox({ rateLimitRps: 0, tokenRateLimitRps: 0 });
        h = await backend.open({ migrate: true });
        const config = loadPlatformConfig(
          { "api-url": sb.apiUrl, "token-url": sb.tokenUrl, "client-id": sb.credentials.clientId },
          { OAUTH_CLIENT_SECRET: sb.credentials.clientSecret },
        );
        client = createPlatformClient({ ...config, rate: 10_000 }, { scopes: WRITE_SCOPES });
      });
      after(async () => {
        await client.close();
        await h.close();
        await sb.close();
      });

      beforeEach(async () => {
        sb.reset();
        sb.seedIdentities(ROWS, { migratedFraction: 0, driftFraction: 0 });
        // A: someone added the client control meanwhile. B: still missing. C: a delete whose
        // control was removed meanwhile. D: a delete whose control is still there. GONE: unknown
        // to the platform. E: pending but decided in this process (fresh): not re-read.
        sb.addControl(A, { type: "SELL_ONLY", set_by: "CLIENT", is_overridable: true });
        deletable = sb.addControl(C, {
          type: "SELL_ONLY",
          set_by: "CLIENT",
          is_overridable: true,
          deleted: true,
        }).id;
        kept = sb.addControl(D, { type: "SELL_ONLY", set_by: "CLIENT", is_overridable: true }).id;
        sb.addControl(F, { type: "SELL_ONLY", set_by: "SERVICE", is_overridable: false });
        await sql`delete from controls_migration.runs`.execute(h.db);
        // The platform's size stand-in decides the strategy: 30 identities list in one page.
        const rowsRead = strategy === "bulk" ? 30 : 1_000_000;
        await sql`insert into controls_migration.runs (id, mode, status, tool_version, host, pid, counts)
          values (${RUN}, 'apply', 'running', 'test', 'here', 1, ${JSON.stringify({ source_rows_read: rowsRead })})`.execute(
          h.db,
        );
        const add = async (identity: string, action: string, key: string, stale: boolean) =>
          sql`insert into controls_migration.actions (run_id, identity_id, action, control_type, control_key, status, updated_at)
              values (${RUN}, ${identity}, ${action}, 'SELL_ONLY', ${key}, 'pending',
                      ${stale ? sql`now() - interval '1 hour'` : sql`now()`})`.execute(h.db);
        await add(A, "create", "SELL_ONLY:client", true);
        await add(B, "create", "SELL_ONLY:client", true);
        await add(C, "delete", deletable, true);
        await add(D, "delete", kept, true);
        await add(GONE, "create", "SELL_ONLY:client", true);
        await add(E, "create", "SELL_ONLY:client", false);
        await add(F, "create", "SELL_ONLY:client", true);
        // G: user_disabled, planned as missing_client_control; a SELL_ONLY of an unknown owner
        // appeared since: the diff rules no longer call for the create (a person decides).
        sb.addControl(G, { type: "SELL_ONLY", set_by: "WEIRD", is_overridable: true });
        const finding = await sql<{ id: number }>`
          insert into controls_migration.findings (run_id, identity_id, finding, user_disabled, admin_disabled)
          values (${RUN}, ${G}, 'missing_client_control', true, false) returning id`.execute(h.db);
        await sql`insert into controls_migration.actions (run_id, identity_id, finding_id, action, control_type, control_key, status, updated_at)
          values (${RUN}, ${G}, ${finding.rows[0]?.id}, 'create', 'SELL_ONLY', 'SELL_ONLY:client', 'pending', now() - interval '1 hour')`.execute(
          h.db,
        );
      });

      it("adopts a create whose control appeared, skips one the fresh state no longer calls for, marks a vanished delete done, fails an unknown identity, and leaves the rest pending and fresh", async () => {
        const ctx = { db: h.db, client, runId: RUN, logger: silentLogger };
        const r = await reverifyPending(ctx);
        assert.equal(r.strategy, strategy);
        assert.equal(r.reread, 7);
        const rows = await sql<{
          identity_id: string;
          status: string;
          outcome: string | null;
          fresh: boolean;
        }>`
          select identity_id, status, outcome, updated_at > now() - interval '1 minute' as fresh
          from controls_migration.actions where run_id = ${RUN}`.execute(h.db);
        const by = Object.fromEntries(rows.rows.map((x) => [x.identity_id, x]));
        assert.deepEqual([by[A]?.status, by[A]?.outcome], ["succeeded", "adopted"]);
        assert.deepEqual([by[B]?.status, by[B]?.outcome, by[B]?.fresh], ["pending", null, true]);
        assert.deepEqual([by[C]?.status, by[C]?.outcome], ["succeeded", "already_deleted"]);
        assert.deepEqual([by[D]?.status, by[D]?.fresh], ["pending", true]);
        assert.deepEqual([by[GONE]?.status, by[GONE]?.outcome], ["failed", "identity_not_found"]);
        // A SERVICE control is not the client control the create would make.
        assert.deepEqual([by[F]?.status, by[F]?.outcome], ["pending", null]);
        assert.deepEqual([by[E]?.status, by[E]?.outcome], ["pending", null]);
        assert.deepEqual([by[G]?.status, by[G]?.outcome], ["skipped", "no_longer_missing"]);
        // A second pass finds nothing left to re-read.
        assert.equal((await reverifyPending(ctx)).reread, 0);
        const reads = sb.stats().requests;
        if (strategy === "bulk")
          assert.equal(Object.values(reads["GET /v2/identity/controls"] ?? {}).length, 0);
        else assert.equal(Object.values(reads["GET /v2/identity/identities"] ?? {}).length, 0);
      });
    });
  }
}
