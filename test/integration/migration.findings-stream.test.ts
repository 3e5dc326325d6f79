/**
 * Findings while the listing runs (issue 13 §1): classifying each listed page as it comes gives
 * exactly the findings (and journal) of classifying once the listing is complete, whether its
 * pages waited in memory or in the database meanwhile, on the crafted dataset, for both listings
 * and both backends.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Sandbox, startSandbox } from "controls-sandbox";
import { loadPlatformConfig } from "../../src/config.ts";
import { startFindingsStream } from "../../src/migration/classify/findings-stream.ts";
import type {
  FindingsStream,
  FindingsStreamCounts,
} from "../../src/migration/classify/findings-stream-types.ts";
import { readIdentities } from "../../src/migration/read/identity-reads.ts";
import { listPlatform, type SnapshotContext } from "../../src/migration/read/snapshot.ts";
import { loadSource } from "../../src/migration/read/source-stage.ts";
import {
  createPlatformClient,
  type PlatformClient,
  READ_SCOPES,
} from "../../src/platform/index.ts";
import { craftPlatform, EXPECTED_FINDINGS, seedCraftedSource } from "../helpers/crafted-dataset.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";
import {
  actionsOf as actionsOfRun,
  findingsOf as findingsOfRun,
  NO_HINT,
  QUIET,
  startStreamRun,
  tallyFindings,
} from "../helpers/findings-stream-rig.ts";

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

    function newRun(serialDatabase = false): Promise<SnapshotContext> {
      seq += 1;
      return startStreamRun(h.db, client, `20260101-00000${seq}-feed`, {
        pageSize: PAGE_SIZE,
        serialDatabase,
      });
    }
    /** After a filtered listing, the candidates it did not show are read by id. */
    const finish = (stream: FindingsStream, ctx: SnapshotContext, kind: "bulk" | "filtered") =>
      kind === "bulk"
        ? stream.finish("bulk")
        : stream.finish("filtered", (ids) => readIdentities(ctx, ids));

    /** Source pass first, then each page classified as it is stored. */
    async function whileListing(kind: "bulk" | "filtered") {
      const ctx = await newRun();
      const stream = startFindingsStream(ctx, journal);
      try {
        await loadSource(h.db, ctx.source, ctx.runId, QUIET, undefined, stream.index);
        await stream.sourceComplete();
        const listing = await listPlatform(ctx, kind, NO_HINT, (page) => stream.page(page));
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
        await listPlatform(ctx, kind, NO_HINT, (page) => stream.page(page));
        await loadSource(h.db, ctx.source, ctx.runId, QUIET, undefined, stream.index);
        await stream.sourceComplete();
        return { ctx, counts: await finish(stream, ctx, kind) };
      } finally {
        await stream.close();
      }
    }

    const findingsOf = (runId: string) => findingsOfRun(h.db, runId);
    const actionsOf = (runId: string) => actionsOfRun(h.db, runId);
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
        assert.deepEqual(tallyFindings(liveFindings), EXPECTED_FINDINGS);
      });
    }
  });
}
