/**
 * Findings while the listing runs (issue 13 §1): classifying each listed page as it comes gives
 * exactly the findings (and journal) of classifying once the listing is complete, whether its
 * pages waited in memory or in the database meanwhile, on the crafted dataset, for both listings
 * and both backends.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Sandbox, startSandbox } from "controls-sandbox";
import { sql } from "kysely";
import { loadPlatformConfig, loadSourceConfig } from "../../src/config.ts";
import { silentLogger } from "../../src/log.ts";
import { startFindingsStream } from "../../src/migration/classify/findings-stream.ts";
import type {
  FindingsStream,
  FindingsStreamCounts,
} from "../../src/migration/classify/findings-stream-types.ts";
import { readIdentities } from "../../src/migration/read/identity-reads.ts";
import { listPlatform, type SnapshotContext } from "../../src/migration/read/snapshot.ts";
import { loadSource } from "../../src/migration/read/source-stage.ts";
import { createProgress } from "../../src/migration/steer/progress.ts";
import {
  createPlatformClient,
  type PlatformClient,
  READ_SCOPES,
} from "../../src/platform/index.ts";
import { craftPlatform, EXPECTED_FINDINGS, seedCraftedSource } from "../helpers/crafted-dataset.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";

/** Small pages, so the crafted platform's 18 identities come in several. */
const PAGE_SIZE = 3;
const journal = {
  journalCreates: true,
  journalDeletes: true,
  waitForPlatform: { kind: "no-wait" } as const,
};

for (const backend of backends) {
  describe(`findings while the listing runs on ${backend.name}`, () => {
    let sb: Sandbox;
    let h: TestDatabase;
    let client: PlatformClient;
    let seq = 0;

    before(async () => {
      sb = await startSandbox({ rateLimitRps: 0, tokenRateLimitRps: 0 });
      craftPlatform(sb);
      h = await backend.open({ migrate: true });
      await seedCraftedSource(h.db);
      const config = loadPlatformConfig(
        { "api-url": sb.apiUrl, "token-url": sb.tokenUrl, "client-id": sb.credentials.clientId },
        { OAUTH_CLIENT_SECRET: sb.credentials.clientSecret },
      );
      client = createPlatformClient({ ...config, rate: 10_000 }, { scopes: READ_SCOPES });
    });
    after(async () => {
      await client.close();
      await h.close();
      await sb.close();
    });

    async function newRun(serialDatabase = false): Promise<SnapshotContext> {
      seq += 1;
      const runId = `20260101-00000${seq}-feed`;
      await sql`insert into controls_migration.runs (id, mode, status, tool_version, host, pid)
        values (${runId}, 'reconcile', 'running', 'test', 'here', 1)`.execute(h.db);
      return {
        db: h.db,
        client,
        source: loadSourceConfig({}, {}),
        runId,
        logger: silentLogger,
        progress: createProgress({ enabled: false, logger: silentLogger }),
        listing: { rate: 10_000, maxParallel: 2, retryBaseMs: 10, pageSize: PAGE_SIZE },
        serialDatabase,
      };
    }
    const hint = { expectedItems: null, latencyMs: null };
    /** After a filtered listing, the candidates it did not show are read by id. */
    const finish = (stream: FindingsStream, ctx: SnapshotContext, kind: "bulk" | "filtered") =>
      kind === "bulk"
        ? stream.finish("bulk")
        : stream.finish("filtered", (ids) => readIdentities(ctx, ids));
    const quiet = createProgress({ enabled: false, logger: silentLogger });

    /** Source pass first, then each page classified as it is stored. */
    async function whileListing(kind: "bulk" | "filtered") {
      const ctx = await newRun();
      const stream = startFindingsStream(ctx, journal);
      try {
        await loadSource(h.db, ctx.source, ctx.runId, quiet, undefined, stream.index);
        await stream.sourceComplete();
        const listing = await listPlatform(ctx, kind, hint, (page) => stream.page(page));
        assert.ok(listing.pages > 2, `several pages: ${listing.pages}`);
        return { ctx, counts: await finish(stream, ctx, kind) };
      } finally {
        await stream.close();
      }
    }

    /**
     * The whole listing first, classified only once it and the source pass are complete: its
     * pages held in memory meanwhile, or (`memoryBytes: 0`) stored and caught up from the database.
     * With `serialDatabase`, the held pages' writes, released side by side, are grouped.
     */
    async function afterListing(
      kind: "bulk" | "filtered",
      memoryBytes?: number,
      serialDatabase = false,
    ) {
      const ctx = await newRun(serialDatabase);
      const stream = startFindingsStream(ctx, { ...journal, memoryBytes });
      try {
        await listPlatform(ctx, kind, hint, (page) => stream.page(page));
        await loadSource(h.db, ctx.source, ctx.runId, quiet, undefined, stream.index);
        await stream.sourceComplete();
        return { ctx, counts: await finish(stream, ctx, kind) };
      } finally {
        await stream.close();
      }
    }

    const findingsOf = async (runId: string) =>
      (
        await sql<Record<string, unknown>>`
          select identity_id, finding, user_disabled, admin_disabled, expected_type,
                 expected_set_by, expected_is_overridable, observed_control_id, observed_set_by,
                 observed_is_overridable, other_active_controls, detail, prunable
          from controls_migration.findings where run_id = ${runId}
          order by identity_id nulls first, finding, observed_control_id nulls first`.execute(h.db)
      ).rows;
    const actionsOf = async (runId: string) =>
      (
        await sql<Record<string, unknown>>`
          select a.identity_id, a.action, a.control_type, a.control_key, a.status, f.finding
          from controls_migration.actions a
          left join controls_migration.findings f on f.id = a.finding_id
          where a.run_id = ${runId} order by a.identity_id, a.action, a.control_key`.execute(h.db)
      ).rows;
    const tally = (rows: Record<string, unknown>[]) => {
      const t: Record<string, number> = Object.fromEntries(
        Object.keys(EXPECTED_FINDINGS).map((k) => [k, 0]),
      );
      for (const r of rows) t[r.finding as string] = (t[r.finding as string] ?? 0) + 1;
      return t;
    };
    const classified = (c: FindingsStreamCounts) => c.asListed + c.caughtUp + c.unlisted;

    for (const kind of ["bulk", "filtered"] as const) {
      it(`a ${kind} listing's findings and journal computed page by page equal those computed after the listing, held in memory (their writes grouped or not) or stored meanwhile`, async () => {
        const live = await whileListing(kind);
        const held = await afterListing(kind);
        const grouped = await afterListing(kind, undefined, true);
        const stored = await afterListing(kind, 0);
        // Live: every listed identity was classified as its page came; only the candidates no
        // page held were left for after the last page.
        assert.equal(live.counts.caughtUp, 0);
        assert.equal(live.counts.held, 0);
        assert.ok(live.counts.asListed > 0);
        assert.equal(live.counts.unlisted, kind === "bulk" ? 1 : 5);
        // Held: nothing could be classified before the source pass; the pages waited in memory.
        assert.equal(held.counts.held, live.counts.asListed);
        assert.equal(held.counts.caughtUp, 0);
        // Stored: the pages went to the database, and the catch-up classified them from there.
        assert.equal(stored.counts.asListed, 0);
        assert.equal(stored.counts.caughtUp, live.counts.asListed);
        for (const other of [held, grouped, stored]) {
          assert.equal(classified(other.counts), classified(live.counts));
          assert.equal(other.counts.actions, live.counts.actions);
        }

        const liveFindings = await findingsOf(live.ctx.runId);
        for (const other of [held, grouped, stored]) {
          assert.deepEqual(await findingsOf(other.ctx.runId), liveFindings);
          assert.deepEqual(await actionsOf(other.ctx.runId), await actionsOf(live.ctx.runId));
        }
        // Filtered reads the candidates it did not list by id: their legacy fields, and I's 404.
        assert.deepEqual(tally(liveFindings), EXPECTED_FINDINGS);
      });
    }
  });
}
