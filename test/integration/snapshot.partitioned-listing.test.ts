/**
 * Issue 18: a listing read as created_at windows side by side, against the sandbox over real
 * HTTP (behind a recording proxy where a test fails or rewrites an answer), and stored on every
 * database backend. The dataset is the crafted one of the end-to-end tests plus 3,000 identities
 * packed on 40 consecutive milliseconds, 75 on each, so that every window edge and every meeting
 * point of two cursors falls on identities sharing one created_at.
 */
import assert from "node:assert/strict";
import { after, afterEach, before, describe, it } from "node:test";
import { type Sandbox, startSandbox } from "controls-sandbox";
import { sql } from "kysely";
import { loadPlatformConfig, type PlatformConfig } from "../../src/config.ts";
import { prng, uuidFrom } from "../../src/contract/index.ts";
import { insertRun } from "../../src/db/journal/run-queries.ts";
import { silentLogger } from "../../src/log.ts";
import {
  type ListingStats,
  listPartitioned,
} from "../../src/migration/read/partitioned-listing.ts";
import { type ListingFigures, listPlatform } from "../../src/migration/read/snapshot.ts";
import { createProgress } from "../../src/migration/steer/progress.ts";
import {
  createPlatformClient,
  type PlatformClient,
  PlatformError,
  READ_SCOPES,
} from "../../src/platform/index.ts";
import { craftPlatform } from "../helpers/crafted-dataset.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";
import {
  type HostileOptions,
  type HostilePlatform,
  identityRecord,
  startHostilePlatform,
} from "../helpers/hostile-platform.ts";
import { startProxy, type TestProxy } from "../helpers/http-proxy.ts";

const BASE = Date.parse("2024-03-01T12:00:00.000Z");
const PACKED = 3000;
const MS = 40;
const PAGE = 50;
const rand = prng(1818);

function seedPacked(sandbox: Sandbox): void {
  const rows = Array.from({ length: PACKED }, (_, i) => ({
    id: uuidFrom(rand),
    user_disabled: i % 3 === 0,
    admin_disabled: i % 7 === 0,
    created_at: new Date(BASE + (i % MS)).toISOString(),
  }));
  sandbox.seedIdentities(rows, { migratedFraction: 0, driftFraction: 0 });
  rows.forEach((r, i) => {
    if (i % 5 < 2)
      sandbox.addControl(r.id, { type: "SELL_ONLY", set_by: "CLIENT", is_overridable: true });
    if (i % 11 === 0)
      sandbox.addControl(r.id, { type: "SELL_ONLY", set_by: "SERVICE", is_overridable: false });
    if (i % 13 === 0)
      sandbox.addControl(r.id, { type: "FROZEN", set_by: "SERVICE", is_overridable: false });
  });
}

function clientFor(
  sandbox: Sandbox,
  apiUrl: string,
  over: Partial<PlatformConfig> = {},
): PlatformClient {
  const base = loadPlatformConfig(
    { "api-url": apiUrl, "token-url": sandbox.tokenUrl, "client-id": sandbox.credentials.clientId },
    { OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret },
  );
  return createPlatformClient(
    { ...base, rate: 1000, concurrency: 8, retryBaseMs: 5, retryCapMs: 20, ...over },
    { scopes: READ_SCOPES, logger: silentLogger },
  );
}

interface Listed {
  readonly ids: string[];
  readonly stats: ListingStats;
}

/** Lists with at most `maxParallel` cursors; the sandbox's latency makes more than one pay. */
async function list(
  client: PlatformClient,
  maxParallel: number,
  controlTypes?: string[],
  onPage?: (ids: string[]) => void,
): Promise<Listed> {
  const ids: string[] = [];
  const stats = await listPartitioned({
    list: (o) => client.listIdentities(o),
    controlTypes,
    maxParallel,
    pageSize: PAGE,
    rate: () => 1000,
    latencyMs: () =>
      client.metrics().endpoints["GET /v2/identity/identities"]?.latencyMs.p50 ?? null,
    retryBaseMs: 5,
    onPage: async (page) => {
      const got = page.map((i) => i.id);
      ids.push(...got);
      onPage?.(got);
    },
  });
  return { ids, stats };
}

const duplicatesOf = (ids: string[]) => ids.filter((id, i) => ids.indexOf(id) !== i);

describe("partitioned identities listings against the sandbox", () => {
  let sandbox: Sandbox;
  let proxy: TestProxy;
  let client: PlatformClient;
  const single: Record<string, string[]> = {};

  before(async () => {
    sandbox = await startSandbox({ port: 0, rateLimitRps: 0, tokenRateLimitRps: 0 });
    craftPlatform(sandbox);
    seedPacked(sandbox);
    proxy = await startProxy(sandbox.apiUrl);
    client = clientFor(sandbox, proxy.url);
    single.bulk = (await list(client, 1)).ids.sort();
    single.filtered = (await list(client, 1, ["SELL_ONLY"])).ids.sort();
    sandbox.setFaults({ latencyMs: 25 });
  });

  after(async () => {
    await client?.close();
    await proxy?.close();
    await sandbox?.close();
  });

  for (const kind of ["bulk", "filtered"] as const) {
    it(`the partitioned ${kind} listing reads exactly the single cursor's identities, each once, where identities share a created_at on window edges`, async () => {
      const r = await list(client, 8, kind === "filtered" ? ["SELL_ONLY"] : undefined);
      assert.deepEqual(duplicatesOf(r.ids), []);
      assert.deepEqual([...r.ids].sort(), single[kind]);
      assert.ok(r.stats.peakParallel >= 4, `cursors: ${r.stats.peakParallel}`);
      assert.ok(r.stats.windows >= 3, `windows: ${r.stats.windows}`);
      assert.ok(
        r.stats.duplicates > 0,
        "cursors met on a shared millisecond and skipped what the other had read",
      );
      if (kind === "filtered") assert.ok(single.filtered!.length < single.bulk!.length / 2);
    });
  }

  it("an identity created during the listing on a window edge is read once", async () => {
    const late = uuidFrom(rand);
    let added = false;
    const r = await list(client, 8, undefined, () => {
      if (added) return;
      added = true;
      sandbox.seedIdentities(
        [
          {
            id: late,
            user_disabled: true,
            admin_disabled: false,
            created_at: new Date(BASE + MS / 2).toISOString(),
          },
        ],
        { migratedFraction: 0, driftFraction: 0 },
      );
    });
    assert.deepEqual(duplicatesOf(r.ids), []);
    const rest = r.ids.filter((id) => id !== late).sort();
    assert.deepEqual(rest, single.bulk, "every identity there before the listing began is read");
    assert.ok(r.ids.filter((id) => id === late).length <= 1);
    // It is on the platform now: later listings read it.
    single.bulk = [...(single.bulk ?? []), late].sort();
  });

  it("a window that fails mid-way is read again alone, and the listing stays complete", async () => {
    const failing = clientFor(sandbox, proxy.url, { maxAttempts: 1 });
    let failed = 0;
    proxy.requests.length = 0;
    proxy.failWhen = (req) => {
      const q = new URL(req.url, "http://x").searchParams;
      if (failed === 0 && q.has("page_cursor") && q.has("created_at.lt")) {
        failed += 1;
        return "fail";
      }
      return "forward";
    };
    try {
      const r = await list(failing, 8);
      assert.equal(failed, 1);
      assert.equal(r.stats.windowRetries, 1);
      assert.deepEqual(duplicatesOf(r.ids), []);
      assert.deepEqual([...r.ids].sort(), single.bulk);
      const firstPages = proxy.requests.filter((req) => {
        const q = new URL(req.url, "http://x").searchParams;
        return (
          req.url.startsWith("/v2/identity/identities?") &&
          [...q.keys()].every((k) => k === "limit" || k === "order")
        );
      });
      assert.deepEqual(
        firstPages.map((req) => new URL(req.url, "http://x").searchParams.get("order")),
        ["ASC"],
        "the listing was not started over: its very first page was asked for once",
      );
    } finally {
      proxy.failWhen = () => "forward";
      await failing.close();
    }
  });

  it("a window whose next page repeats its cursor stops the listing instead of looping", async () => {
    proxy.rewrite = (req, body) => {
      const q = new URL(req.url, "http://x").searchParams;
      const cursor = q.get("page_cursor");
      if (!cursor || !q.has("created_at.lt")) return body;
      return JSON.stringify({ ...JSON.parse(body), next_page_cursor: cursor });
    };
    try {
      await assert.rejects(list(client, 8), /next_page_cursor repeats an earlier cursor/);
    } finally {
      proxy.rewrite = null;
    }
  });
});

for (const backend of backends) {
  describe(`a partitioned listing stored on ${backend.name}`, () => {
    let sandbox: Sandbox;
    let client: PlatformClient;
    /** One database for both kinds: every row they write and read is keyed by its own run. */
    let h: TestDatabase;

    before(async () => {
      h = await backend.open({ migrate: true });
      sandbox = await startSandbox({
        port: 0,
        rateLimitRps: 0,
        tokenRateLimitRps: 0,
        latencyMs: 25,
      });
      craftPlatform(sandbox);
      seedPacked(sandbox);
      client = clientFor(sandbox, sandbox.apiUrl);
    });

    after(async () => {
      await client?.close();
      await sandbox?.close();
      await h?.close();
    });

    for (const kind of ["bulk", "filtered"] as const) {
      it(`gives the ${kind} snapshot of a single cursor, identities and controls alike`, async () => {
        const snapshot = async (
          runId: string,
          maxParallel: number,
        ): Promise<[ListingFigures, string[], string[]]> => {
          await insertRun(h.db, {
            id: runId,
            mode: "plan",
            parentRunId: null,
            options: {},
            toolVersion: "test",
          });
          const figures = await listPlatform(
            {
              db: h.db,
              client,
              source: {} as never,
              runId,
              logger: silentLogger,
              progress: createProgress({ enabled: false, logger: silentLogger }),
              listing: { rate: 1000, maxParallel, retryBaseMs: 5, pageSize: PAGE },
            },
            kind,
            { expectedItems: null, latencyMs: null },
          );
          const ids = await sql<{ r: string }>`
            select identity_id || ':' || status as r from controls_migration.snapshot_identities
            where run_id = ${runId} order by 1`.execute(h.db);
          const controls = await sql<{ r: string }>`
            select concat_ws(':', identity_id, control_id, type, set_by, set_by_raw, is_overridable) as r
            from controls_migration.snapshot_controls where run_id = ${runId} order by 1`.execute(
            h.db,
          );
          return [figures, ids.rows.map((x) => x.r), controls.rows.map((x) => x.r)];
        };
        const [one, oneIds, oneControls] = await snapshot(`single-${kind}`, 1);
        const [many, manyIds, manyControls] = await snapshot(`windows-${kind}`, 8);
        assert.ok(many.windows >= 3 && many.peak_parallel >= 4, JSON.stringify(many));
        assert.equal(one.windows, 1);
        assert.deepEqual(manyIds, oneIds);
        assert.deepEqual(manyControls, oneControls);
        assert.equal(many.identities, oneIds.length, "each identity stored once");
        assert.equal(many.sell_only_identities, one.sell_only_identities);
      });
    }
  });
}

describe("a partitioned listing whose platform answers as no platform should", () => {
  let hostile: HostilePlatform | undefined;
  let client: PlatformClient | undefined;

  afterEach(async () => {
    await client?.close();
    await hostile?.close();
    [client, hostile] = [undefined, undefined];
  });

  async function clientOf(opts: HostileOptions): Promise<PlatformClient> {
    hostile = await startHostilePlatform(opts);
    const config = loadPlatformConfig(
      {
        "api-url": hostile.url,
        "token-url": `${hostile.url}/oauth2/token`,
        "client-id": hostile.clientId,
      },
      { OAUTH_CLIENT_SECRET: hostile.clientSecret },
    );
    client = createPlatformClient(
      { ...config, rate: 1000, retryBaseMs: 5, retryCapMs: 20 },
      { scopes: READ_SCOPES, logger: silentLogger },
    );
    return client;
  }

  it("a fatal answer to the page that travels while the page before it is stored rejects the listing, and no rejection goes unhandled", async () => {
    let n = 0;
    const c = await clientOf({
      identitiesList: async () => ({
        items: ["a", "b", "c"].map(identityRecord),
        next_page_cursor: `fresh-${++n}`,
      }),
    });
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", record);
    try {
      await assert.rejects(
        listPartitioned({
          list: (o) => c.listIdentities(o),
          maxParallel: 1,
          rate: () => 1000,
          latencyMs: () => null,
          // Storing outlasts the next page's request, which the runaway guard refuses meanwhile.
          onPage: () => new Promise((resolve) => setTimeout(resolve, 300)),
        }),
        (err: unknown) => {
          assert.ok(err instanceof PlatformError, String(err));
          assert.equal(err.classification, "fatal");
          assert.match(err.message, /^GET \/v2\/identity\/identities: page 2 brought no item/);
          return true;
        },
      );
      assert.deepEqual(unhandled, []);
      assert.equal(hostile?.calls["GET /v2/identity/identities"], 2, "the listing stopped there");
    } finally {
      process.off("unhandledRejection", record);
    }
  });
});
