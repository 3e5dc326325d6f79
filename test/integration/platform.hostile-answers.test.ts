/**
 * The platform client against answers a real platform should never give, served over real HTTP by
 * a small server of our own (test/helpers/hostile-platform.ts).
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { loadPlatformConfig } from "../../src/config.ts";
import { createLogger } from "../../src/log.ts";
import {
  createPlatformClient,
  type PlatformClient,
  PlatformError,
  READ_SCOPES,
} from "../../src/platform/index.ts";
import {
  type HostileOptions,
  type HostilePlatform,
  identityRecord,
  startHostilePlatform,
} from "../helpers/hostile-platform.ts";

let platform: HostilePlatform | undefined;
let client: PlatformClient | undefined;
const logged: string[] = [];

async function clientFor(opts: HostileOptions, over: { maxWaitS?: number } = {}) {
  platform = await startHostilePlatform(opts);
  const config = loadPlatformConfig(
    {
      "api-url": platform.url,
      "token-url": `${platform.url}/oauth2/token`,
      "client-id": platform.clientId,
    },
    { OAUTH_CLIENT_SECRET: platform.clientSecret },
  );
  const logger = createLogger({ level: "warn", write: (line) => logged.push(line) });
  client = createPlatformClient(
    { ...config, rate: 10_000, retryBaseMs: 1, retryCapMs: 5, ...over },
    { scopes: READ_SCOPES, logger },
  );
  return { platform, client };
}

async function drain(c: PlatformClient, expectedTotal?: number): Promise<string[]> {
  const ids: string[] = [];
  for await (const page of c.listIdentities({ limit: 10, expectedTotal })) {
    for (const i of page) ids.push(i.id);
  }
  return ids;
}

afterEach(async () => {
  await client?.close();
  await platform?.close();
  client = undefined;
  platform = undefined;
  logged.length = 0;
});

describe("listings that would never end", { timeout: 15_000 }, () => {
  it("a listing that hands out a new cursor with every page but serves the same identities stops, naming the endpoint", async () => {
    let n = 0;
    const { client: c, platform: p } = await clientFor({
      identitiesList: async () => ({
        items: ["a", "b"].map(identityRecord),
        next_page_cursor: `fresh-${++n}`,
      }),
    });
    await assert.rejects(drain(c), (err: unknown) => {
      assert.ok(err instanceof PlatformError);
      assert.equal(err.kind, "protocol");
      assert.match(err.message, /^GET \/v2\/identity\/identities: page 2 brought no item/);
      return true;
    });
    assert.equal(p.calls["GET /v2/identity/identities"], 2);
  });

  it("a listing that keeps bringing new identities stops past twice the expected pages plus ten", async () => {
    let n = 0;
    const { client: c, platform: p } = await clientFor({
      identitiesList: async () => {
        n += 1;
        return {
          items: Array.from({ length: 10 }, (_, i) => identityRecord(`id-${n}-${i}`)),
          next_page_cursor: `page-${n}`,
        };
      },
    });
    // 100 expected identities at 10 a page: 10 pages expected, at most 2 × 10 + 10 = 30 read.
    await assert.rejects(
      drain(c, 100),
      /GET \/v2\/identity\/identities: read 30 pages, more than twice/,
    );
    assert.equal(p.calls["GET /v2/identity/identities"], 30);
  });

  it("a healthy listing of exactly the expected size is read to its end", async () => {
    const ids = Array.from({ length: 95 }, (_, i) => `ok-${i}`);
    const { client: c } = await clientFor({ identities: ids });
    assert.deepEqual(await drain(c, 95), ids);
  });
});

describe("an identity served twice within one page", () => {
  it("is kept once, counted as a platform anomaly and logged", async () => {
    const { client: c } = await clientFor({
      identitiesList: async () => ({
        items: ["a", "b", "a", "c"].map(identityRecord),
        next_page_cursor: "",
      }),
    });
    assert.deepEqual(await drain(c), ["a", "b", "c"]);
    assert.equal(c.metrics().endpoints["GET /v2/identity/identities"]?.anomalies, 1);
    assert.ok(
      logged.some((l) =>
        /WARN .*Platform anomaly: GET \/v2\/identity\/identities served 1 identity record\(s\) twice within one page \(first: "a"\)/.test(
          l,
        ),
      ),
      logged.join("\n"),
    );
  });
});

describe("waits longer than --max-wait-s", { timeout: 15_000 }, () => {
  it("a token endpoint asking to wait 3,000,000 s stops the client at once, says why, and is asked only once", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on("warning", onWarning);
    try {
      const { client: c, platform: p } = await clientFor(
        {
          token: (_req, reply) =>
            reply.code(429).header("retry-after", "3000000").send({ error: "slow_down" }),
        },
        { maxWaitS: 900 },
      );
      await assert.rejects(c.getIdentity("a"), (err: unknown) => {
        assert.ok(err instanceof PlatformError);
        assert.match(
          err.message,
          /POST \/oauth2\/token: 429: the platform asked to wait 3000000 s \(Retry-After\), until \d{4}-.*longer than --max-wait-s 900, so the run stops here/,
        );
        return true;
      });
      // Later calls fail at once with the same reason, without asking again.
      await assert.rejects(c.listIdentityControls("b"), /asked to wait 3000000 s/);
      await new Promise((r) => setTimeout(r, 1_100));
      assert.equal(p.calls["POST /oauth2/token"], 1);
      assert.deepEqual(warnings, []);
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("an API endpoint asking to wait beyond --max-wait-s stops every request, in flight or queued", async () => {
    const { client: c, platform: p } = await clientFor(
      {
        controlsList: (_req, reply) =>
          reply.code(429).header("retry-after", "100000").send({ title: "Too Many Requests" }),
      },
      { maxWaitS: 60 },
    );
    const reads = Array.from({ length: 20 }, (_, i) => c.listIdentityControls(`id-${i}`));
    const results = await Promise.allSettled(reads);
    assert.ok(results.every((r) => r.status === "rejected"));
    for (const r of results) {
      assert.match(
        String((r as PromiseRejectedResult).reason.message),
        /asked to wait 100000 s \(Retry-After\).*--max-wait-s 60/,
      );
    }
    assert.ok(
      (p.calls["GET /v2/identity/controls"] ?? 0) <= 8,
      `sent after the refusal: ${p.calls["GET /v2/identity/controls"]}`,
    );
  });

  it("a Retry-After within --max-wait-s is still honoured", async () => {
    let n = 0;
    const { client: c } = await clientFor(
      {
        token: (_req, reply) => {
          n += 1;
          if (n === 1) return reply.code(429).header("retry-after", "1").send({});
          return reply.send({ access_token: "t", token_type: "Bearer", expires_in: 600 });
        },
        identities: ["a"],
      },
      { maxWaitS: 900 },
    );
    const started = Date.now();
    assert.equal((await c.getIdentity("a").catch((e) => e)).kind, "not_found");
    assert.ok(Date.now() - started >= 900, "waited the second the token endpoint asked for");
  });
});
