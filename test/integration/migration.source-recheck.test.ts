/**
 * The re-read before a send, against a real source relation and a real sandbox: the source's flags
 * of pending creates are read again (by ids and in one pass), and only the control the mapping
 * expects (CLIENT, SELL_ONLY, overridable) is adopted.
 */
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { type Sandbox, startSandbox } from "controls-sandbox";
import { sql } from "kysely";
import { loadPlatformConfig, loadSourceConfig } from "../../src/config.ts";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { seedSource } from "../../src/db/source/seed.ts";
import { silentLogger } from "../../src/log.ts";
import { reverifyPending } from "../../src/migration/execute/reverify.ts";
import { recheckSource } from "../../src/migration/execute/source-recheck.ts";
import {
  createPlatformClient,
  type PlatformClient,
  WRITE_SCOPES,
} from "../../src/platform/index.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";

const N = 200;
const SEED = 31;
const RUN = "20260101-000000-cafe";
const ALL = [...syntheticIdentities(N, SEED)];
// Ids held by one row only, lower-case UUIDs: rows the reader finds valid.
const once = (id: unknown) =>
  typeof id === "string" &&
  /^[0-9a-f-]{36}$/.test(id) &&
  ALL.filter((r) => r.id === id).length === 1;
const FLAGGED = ALL.filter((r) => r.user_disabled === true && r.admin_disabled === false)
  .map((r) => r.id)
  .filter(once);
const CLEAN = ALL.filter((r) => r.user_disabled === false && r.admin_disabled === false)
  .map((r) => r.id)
  .filter(once);
const [KEPT, CLEARED, DELETED, NON_OVERRIDABLE] = FLAGGED as [string, string, string, string];
const [NEWLY] = CLEAN as [string];
const source = loadSourceConfig({}, {});

const outcomes = async (h: TestDatabase) => {
  const r = await sql<{ identity_id: string; status: string; outcome: string | null }>`
    select identity_id, status, outcome from controls_migration.actions
    where run_id = ${RUN}`.execute(h.db);
  return Object.fromEntries(r.rows.map((x) => [x.identity_id, `${x.status}:${x.outcome}`]));
};

for (const backend of backends) {
  describe(`the re-read before a send on ${backend.name}`, () => {
    let sb: Sandbox;
    let h: TestDatabase;
    let client: PlatformClient;

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
      assert.ok(FLAGGED.length >= 4 && CLEAN.length >= 1, "the seed has flagged and clean rows");
      sb.reset();
      sb.seedIdentities(ALL, { migratedFraction: 0, driftFraction: 0 });
      await sql`drop table if exists identities`.execute(h.db);
      // The journal tables hold no foreign key to runs (0006): each is emptied on its own.
      for (const t of ["actions", "findings", "run_events", "runs"])
        await sql`delete from ${sql.table(`controls_migration.${t}`)}`.execute(h.db);
      await seedSource(h.db, source, { identities: N, seed: SEED });
      await sql`insert into controls_migration.runs (id, mode, status, tool_version, host, pid, source_rows_read)
        values (${RUN}, 'apply', 'running', 'test', 'here', 1, ${N})`.execute(h.db);
      // The run read every flagged row: a finding each, a pending create for four of them.
      await sql`insert into controls_migration.findings (run_id, identity_id, finding, user_disabled, admin_disabled)
        select ${RUN}, id::text, 'missing_client_control', user_disabled, admin_disabled
        from identities where user_disabled or admin_disabled`.execute(h.db);
      await sql`insert into controls_migration.actions (run_id, identity_id, finding_id, action, control_type, control_key, status, created_at, updated_at)
        select ${RUN}, f.identity_id, f.id, 'create', 'SELL_ONLY', 'SELL_ONLY:client', 'pending', now() - interval '1 hour', now() - interval '1 hour'
        from controls_migration.findings f
        where f.run_id = ${RUN} and f.identity_id in (${sql.join([KEPT, CLEARED, DELETED, NON_OVERRIDABLE])})`.execute(
        h.db,
      );
      // Meanwhile in the source: one flag cleared, one row deleted, one flag newly set.
      await sql`update identities set user_disabled = false where id::text = ${CLEARED}`.execute(
        h.db,
      );
      await sql`delete from identities where id::text = ${DELETED}`.execute(h.db);
      await sql`update identities set user_disabled = true where id::text = ${NEWLY}`.execute(h.db);
    });

    for (const [strategy, pending, rows] of [
      ["by-ids", 4, N],
      ["pass", 4, 20],
    ] as const) {
      it(`by ${strategy}, cancels the creates whose flag was cleared or whose row is gone as skipped:source_changed, keeps the one still flagged pending, and counts the flag newly set`, async () => {
        const ctx = { db: h.db, client, runId: RUN, logger: silentLogger };
        const since = new Date(Date.now() - 60_000);
        const r = await recheckSource(ctx, source, RUN, since, pending, rows);
        assert.equal(r.strategy, strategy);
        assert.equal(r.sourceChanged, 2);
        assert.equal(r.newlyFlagged, 1);
        const by = await outcomes(h);
        assert.equal(by[KEPT], "pending:null");
        assert.equal(by[NON_OVERRIDABLE], "pending:null");
        assert.equal(by[CLEARED], "skipped:source_changed");
        assert.equal(by[DELETED], "skipped:source_changed");
        const ev = await sql<{ detail: string }>`
          select detail from controls_migration.run_events
          where run_id = ${RUN} and kind = 'source_reread'`.execute(h.db);
        assert.equal(ev.rows.length, 1);
        assert.match(ev.rows[0]?.detail ?? "", /2 pending creates cancelled.*1 flags newly set/);
      });
    }

    it("counts flags newly set against the plan of an apply --plan run, whose own findings are the plan's creates only", async () => {
      const PLAN = "20260101-000000-p1a2";
      await sql`insert into controls_migration.runs (id, mode, status, tool_version, host, pid, source_rows_read)
        values (${PLAN}, 'plan', 'completed', 'test', 'here', 1, ${N})`.execute(h.db);
      // The plan classified every flagged row; the apply copied the findings of its creates only.
      await sql`insert into controls_migration.findings (run_id, identity_id, finding, user_disabled, admin_disabled)
        select ${PLAN}, identity_id, finding, user_disabled, admin_disabled
        from controls_migration.findings where run_id = ${RUN}`.execute(h.db);
      await sql`delete from controls_migration.findings
        where run_id = ${RUN} and identity_id not in (${sql.join([KEPT, CLEARED, DELETED, NON_OVERRIDABLE])})`.execute(
        h.db,
      );
      await sql`update controls_migration.runs set parent_run_id = ${PLAN} where id = ${RUN}`.execute(
        h.db,
      );
      const left = await sql<{ n: number }>`select count(*)::int as n
        from controls_migration.findings where run_id = ${RUN}`.execute(h.db);
      assert.equal(left.rows[0]?.n, 4);
      const ctx = { db: h.db, client, runId: RUN, logger: silentLogger };
      const r = await recheckSource(ctx, source, RUN, new Date(Date.now() - 60_000), 4, N);
      assert.equal(r.sourceChanged, 2);
      assert.equal(r.newlyFlagged, 1);
    });

    it("does not adopt a non-overridable CLIENT SELL_ONLY for a pending create: the diff rules report it and nothing is sent", async () => {
      sb.addControl(NON_OVERRIDABLE, {
        type: "SELL_ONLY",
        set_by: "CLIENT",
        is_overridable: false,
      });
      const ctx = {
        db: h.db,
        client,
        runId: RUN,
        logger: silentLogger,
        options: { platform: { concurrency: 4 }, source },
      };
      const r = await reverifyPending(ctx);
      assert.equal(r.adopted, 0);
      assert.equal(r.source?.sourceChanged, 2);
      const by = await outcomes(h);
      assert.equal(by[NON_OVERRIDABLE], "skipped:no_longer_missing");
      assert.equal(by[KEPT], "pending:null");
      const why = await sql<{ error: string }>`
        select error from controls_migration.actions
        where run_id = ${RUN} and identity_id = ${NON_OVERRIDABLE}`.execute(h.db);
      assert.match(why.rows[0]?.error ?? "", /attribute_mismatch/);
      assert.equal(sb.stats().writes.creates, 0);
    });
  });
}
