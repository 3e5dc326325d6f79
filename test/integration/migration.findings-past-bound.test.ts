/**
 * A source larger than the findings stream's in-memory index (issue 30): past the index's bound,
 * a page's identities are claimed in the database (`listed_claims`) and their source rows read
 * there, and the unlisted candidates come from SQL. With the bound set small (none, or a few of
 * the crafted source's ids), the findings and journal are exactly those of the in-memory path,
 * whether pages were classified as listed, held in memory or stored meanwhile, on both backends;
 * an identity a hostile listing serves again on later pages is classified once.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Sandbox, startSandbox } from "controls-sandbox";
import { sql } from "kysely";
import { loadPlatformConfig, loadSourceConfig } from "../../src/config.ts";
import { startFindingsStream } from "../../src/migration/classify/findings-stream.ts";
import type { FindingsMemory } from "../../src/migration/classify/findings-stream-types.ts";
import { readIdentities } from "../../src/migration/read/identity-reads.ts";
import type { ListedIdentity } from "../../src/migration/read/listed-identity.ts";
import { listPlatform, type SnapshotContext } from "../../src/migration/read/snapshot.ts";
import { loadSource } from "../../src/migration/read/source-stage.ts";
import {
  createPlatformClient,
  type PlatformClient,
  READ_SCOPES,
} from "../../src/platform/index.ts";
import {
  craftPlatform,
  EXPECTED_FINDINGS,
  ids,
  SOURCE,
  seedCraftedSource,
} from "../helpers/crafted-dataset.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";
import {
  actionsOf as actionsOfRun,
  findingsOf as findingsOfRun,
  NO_HINT,
  QUIET,
  startStreamRun,
  tallyFindings,
} from "../helpers/findings-stream-rig.ts";
import { type HostileListing, startHostileListing } from "../helpers/hostile-listing.ts";

const PAGE_SIZE = 3;
const journal = {
  journalCreates: true,
  journalDeletes: true,
  waitForPlatform: { kind: "no-wait" } as const,
};
/** When the listing's pages are classified: as listed, held in memory, or stored meanwhile. */
const MODES = ["live", "held", "stored"] as const;
type Mode = (typeof MODES)[number];
/** Every id past the bound, or a few of the source's held and the rest past it. */
const BOUNDS = [0, 5] as const;

for (const backend of backends) {
  describe(`findings past the source index's bound on ${backend.name}`, () => {
    let sb: Sandbox;
    let hostile: HostileListing;
    let h: TestDatabase;
    let client: PlatformClient;
    let hostileClient: PlatformClient;
    let seq = 0;

    before(async () => {
      sb = await startSandbox({ rateLimitRps: 0, tokenRateLimitRps: 0 });
      craftPlatform(sb);
      hostile = await startHostileListing(sb.apiUrl);
      h = await backend.open({ migrate: true });
      await seedCraftedSource(h.db);
      const clientOf = (apiUrl: string) =>
        createPlatformClient(
          {
            ...loadPlatformConfig(
              { "api-url": apiUrl, "token-url": sb.tokenUrl, "client-id": sb.credentials.clientId },
              { OAUTH_CLIENT_SECRET: sb.credentials.clientSecret },
            ),
            rate: 10_000,
          },
          { scopes: READ_SCOPES },
        );
      client = clientOf(sb.apiUrl);
      hostileClient = clientOf(hostile.url);
    });
    after(async () => {
      await client?.close();
      await hostileClient?.close();
      await h?.close();
      await hostile?.close();
      await sb?.close();
    });

    function newRun(platform: PlatformClient): Promise<SnapshotContext> {
      seq += 1;
      return startStreamRun(h.db, platform, `20260102-00000${seq}-feed`, { pageSize: PAGE_SIZE });
    }

    /**
     * One run's findings stream, its pages classified as `mode` says, with `memory`'s bounds.
     * Returns the run's context, its counts, whether its index was complete, and each listed
     * page's ids as the stream received them.
     */
    async function runStream(
      kind: "bulk" | "filtered",
      mode: Mode,
      memory: FindingsMemory,
      platform = client,
    ) {
      const ctx = await newRun(platform);
      const stream = startFindingsStream(ctx, {
        ...journal,
        ...memory,
        ...(mode === "stored" ? { memoryBytes: 0 } : {}),
      });
      const pages: string[][] = [];
      const onPage = (page: readonly ListedIdentity[]) => {
        pages.push(page.map((i) => i.id));
        return stream.page(page);
      };
      const source = () => loadSource(h.db, ctx.source, ctx.runId, QUIET, undefined, stream.index);
      try {
        if (mode === "live") {
          await source();
          await stream.sourceComplete();
          await listPlatform(ctx, kind, NO_HINT, onPage);
        } else {
          await listPlatform(ctx, kind, NO_HINT, onPage);
          await source();
          await stream.sourceComplete();
        }
        const counts =
          kind === "bulk"
            ? await stream.finish("bulk")
            : await stream.finish("filtered", (ids) => readIdentities(ctx, ids));
        return { ctx, counts, complete: stream.index.complete, index: stream.index, pages };
      } finally {
        await stream.close();
      }
    }

    const findingsOf = (runId: string) => findingsOfRun(h.db, runId);
    const actionsOf = (runId: string) => actionsOfRun(h.db, runId);
    const claimsOf = async (runId: string) =>
      (
        await sql<{ n: number }>`select count(*)::int as n from controls_migration.listed_claims
          where run_id = ${runId}`.execute(h.db)
      ).rows[0]?.n;

    for (const kind of ["bulk", "filtered"] as const) {
      it(`a ${kind} listing's findings and journal past the index's bound equal those of the in-memory path, whether its pages were classified as listed, held in memory or stored meanwhile`, async () => {
        const reference = await runStream(kind, "live", {});
        assert.equal(reference.complete, true);
        const expected = await findingsOf(reference.ctx.runId);
        assert.deepEqual(tallyFindings(expected), EXPECTED_FINDINGS);
        const expectedActions = await actionsOf(reference.ctx.runId);
        for (const indexIds of BOUNDS) {
          for (const mode of MODES) {
            const run = await runStream(kind, mode, { indexIds });
            const what = `${mode}, index of ${indexIds} ids`;
            assert.equal(run.complete, false, `${what}: the source went past the index`);
            assert.ok(run.index.size <= indexIds, `${what}: ${run.index.size} ids held`);
            assert.deepEqual(await findingsOf(run.ctx.runId), expected, what);
            assert.deepEqual(await actionsOf(run.ctx.runId), expectedActions, what);
            assert.equal(run.counts.actions, reference.counts.actions, what);
            assert.equal(run.counts.unlisted, reference.counts.unlisted, what);
            assert.equal(await claimsOf(run.ctx.runId), 0, `${what}: claims left behind`);
          }
        }
      });
    }

    it("classifies once an identity past the bound that a hostile listing serves again on later pages, held, stored or as listed", async () => {
      const reference = await runStream("bulk", "live", {});
      const expected = await findingsOf(reference.ctx.runId);
      // Past the bound, candidates of the source served on more than one page.
      const candidates = new Set(SOURCE.filter(([, u, a]) => u || a).map(([k]) => ids[k]));
      for (const indexIds of BOUNDS) {
        for (const mode of MODES) {
          hostile.tamper = {
            pageSize: PAGE_SIZE,
            seed: 30 + indexIds,
            repeatWithin: 0.3,
            reserve: 1,
            firstOnTop: true,
            shuffle: true,
          };
          hostile.reset();
          const run = await runStream("bulk", mode, { indexIds }, hostileClient);
          const what = `${mode}, index of ${indexIds} ids`;
          const pagesOf = new Map<string, number>();
          for (const page of run.pages) {
            for (const id of new Set(page)) pagesOf.set(id, (pagesOf.get(id) ?? 0) + 1);
          }
          const repeatedPastBound = [...pagesOf].filter(
            ([id, n]) => n > 1 && candidates.has(id) && run.index.get(id) === undefined,
          );
          assert.ok(repeatedPastBound.length > 0, `${what}: no candidate past the bound repeated`);
          assert.deepEqual(await findingsOf(run.ctx.runId), expected, what);
          // Stored pages' copies are absorbed by the database (one snapshot row an identity).
          if (mode !== "stored") assert.ok(run.counts.repeats > 0, `${what}: no repeat counted`);
          assert.equal(await claimsOf(run.ctx.runId), 0, `${what}: claims left behind`);
        }
      }
      hostile.tamper = null;
    });
    it("classifies the candidates past the bound that a filtered listing does not show, though no page asked the database", async () => {
      // A platform where no identity holds a control: the filtered listing shows none.
      const plain = await startSandbox({ rateLimitRps: 0, tokenRateLimitRps: 0 });
      const plainClient = createPlatformClient(
        {
          ...loadPlatformConfig(
            {
              "api-url": plain.apiUrl,
              "token-url": plain.tokenUrl,
              "client-id": plain.credentials.clientId,
            },
            { OAUTH_CLIENT_SECRET: plain.credentials.clientSecret },
          ),
          rate: 10_000,
        },
        { scopes: READ_SCOPES },
      );
      const table = "plain_source";
      const rows = Array.from({ length: 6 }, (_, i) => ({
        id: `00000000-0000-4000-8000-${String(900 + i).padStart(12, "0")}`,
        flagged: i < 4,
      }));
      plain.seedIdentities(
        rows.map((r) => ({ id: r.id, user_disabled: r.flagged, admin_disabled: false })),
        { migratedFraction: 0, driftFraction: 0 },
      );
      await sql`create table ${sql.table(table)} (id text, user_disabled boolean, admin_disabled boolean)`.execute(
        h.db,
      );
      for (const r of rows) {
        await sql`insert into ${sql.table(table)} values (${r.id}, ${r.flagged}, false)`.execute(
          h.db,
        );
      }
      const runs = [];
      try {
        for (const indexIds of [undefined, 0]) {
          const ctx = {
            ...(await newRun(plainClient)),
            source: loadSourceConfig({ "source-relation": table }, {}),
          };
          const stream = startFindingsStream(ctx, { ...journal, indexIds });
          try {
            await loadSource(h.db, ctx.source, ctx.runId, QUIET, undefined, stream.index);
            await stream.sourceComplete();
            const listing = await listPlatform(ctx, "filtered", NO_HINT, (page) =>
              stream.page(page),
            );
            assert.equal(listing.identities, 0);
            const counts = await stream.finish("filtered", (ids) => readIdentities(ctx, ids));
            runs.push({
              counts,
              complete: stream.index.complete,
              findings: await findingsOf(ctx.runId),
            });
          } finally {
            await stream.close();
          }
        }
      } finally {
        await plainClient.close();
        await plain.close();
      }
      const [inMemory, pastBound] = runs as [(typeof runs)[0], (typeof runs)[0]];
      assert.equal(pastBound.complete, false);
      assert.equal(pastBound.counts.unlisted, 4);
      assert.equal(inMemory.counts.unlisted, 4);
      assert.equal(pastBound.findings.length, 4);
      assert.deepEqual(pastBound.findings, inMemory.findings);
    });
  });
}
