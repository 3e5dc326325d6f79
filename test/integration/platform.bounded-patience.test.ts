/**
 * The platform client against a platform that refuses forever, answers too much, or redirects the
 * token request: real HTTP on 127.0.0.1 (test/helpers/hostile-platform.ts), no mocks. The run's
 * patience is bounded (--max-refused-s), a page has a size cap, and no redirect is followed.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, it } from "node:test";
import { loadPlatformConfig, type PlatformConfig } from "../../src/config.ts";
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
  startHostilePlatform,
} from "../helpers/hostile-platform.ts";

let platform: HostilePlatform | undefined;
let client: PlatformClient | undefined;
let elsewhere: Server | undefined;
const logged: string[] = [];

async function clientFor(opts: HostileOptions, over: Partial<PlatformConfig> = {}) {
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
    { ...config, retryBaseMs: 1, retryCapMs: 5, ...over },
    { scopes: READ_SCOPES, logger },
  );
  return { platform, client };
}

/** A server on another port that counts what reaches it. */
async function startElsewhere(): Promise<{ url: string; hits: string[] }> {
  const hits: string[] = [];
  elsewhere = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ access_token: "stolen", token_type: "Bearer", expires_in: 60 }));
  });
  await new Promise<void>((resolve) => elsewhere?.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`, hits };
}

afterEach(async () => {
  await client?.close();
  await platform?.close();
  await new Promise((resolve) => (elsewhere ? elsewhere.close(resolve) : resolve(undefined)));
  client = undefined;
  platform = undefined;
  elsewhere = undefined;
  logged.length = 0;
});

describe("a platform that keeps refusing", { timeout: 30_000 }, () => {
  it("answering 429 with Retry-After: -5 forever stops the client within --max-refused-s 2 (plus a second), naming what it answered and for how long; the wait between tries is --penalty-s, not 0", async () => {
    const { client: c, platform: p } = await clientFor(
      {
        identitiesList: (_req, reply) =>
          reply.code(429).header("retry-after", "-5").send({ title: "Too Many Requests" }),
      },
      { maxRefusedS: 2, penaltyS: 0.5 },
    );
    await assert.rejects(c.listIdentities().next(), (err: unknown) => {
      assert.ok(err instanceof PlatformError, String(err));
      assert.equal(err.kind, "cancelled");
      assert.match(
        err.message,
        /^GET \/v2\/identity\/identities: the platform refused every request for 2 s since \S+ \(\d+ × 429; the last: 429 with Retry-After "-5"\), with no success between: that reaches --max-refused-s 2, so the run stops here/,
      );
      return true;
    });
    // Penalty 0.5 s between tries: about 4 in 2 s; "0 s" (the old reading of -5) would be dozens.
    // The count, not the wall clock, shows the stop: a loaded machine tries less often, not more.
    const tries = p.calls["GET /v2/identity/identities"] ?? 0;
    assert.ok(tries >= 2 && tries <= 6, `${tries} tries`);
  });

  it("a success between refusals starts the count again: 429, 200, 429, 200 … for longer than --max-refused-s does not stop the client", async () => {
    let n = 0;
    const { client: c } = await clientFor(
      {
        controlsList: (_req, reply) =>
          ++n % 2 === 1
            ? reply.code(429).header("retry-after", "1").send({})
            : reply.send({ items: [], next_page_cursor: "" }),
      },
      { maxRefusedS: 2, penaltyS: 1 },
    );
    const started = performance.now();
    for (let i = 0; i < 3; i++) assert.deepEqual(await c.listIdentityControls("i-1"), []);
    assert.ok(performance.now() - started > 2500, "the refusals spanned more than the limit");
    assert.equal(n, 6);
  });
});

describe("bounded answers and one redirect policy", { timeout: 30_000 }, () => {
  it("a 50 MB page is refused with an error naming the endpoint and the 16 MiB cap, and the client's memory stays bounded", async () => {
    const page = Buffer.alloc(50 * 1024 * 1024, 0x20);
    const { client: c } = await clientFor({
      identitiesList: (_req, reply) => reply.header("content-type", "application/json").send(page),
    });
    const rssBefore = process.memoryUsage().rss;
    await assert.rejects(c.listIdentities().next(), (err: unknown) => {
      assert.ok(err instanceof PlatformError, String(err));
      assert.equal(err.kind, "protocol");
      assert.match(
        err.message,
        /^GET \/v2\/identity\/identities: 200: the response body is larger than the cap of 16 MiB per response \(Content-Length 52428800 bytes\)/,
      );
      return true;
    });
    assert.ok(
      process.memoryUsage().rss - rssBefore < 40 * 1024 * 1024,
      "the page was not buffered",
    );
  });

  it("a page sent without Content-Length is cut off past the cap, and the error says how much had come", async () => {
    const { client: c } = await clientFor({
      identitiesList: async (_req, reply) => {
        reply.raw.writeHead(200, { "content-type": "application/json" });
        const chunk = Buffer.alloc(1024 * 1024, 0x20);
        for (let i = 0; i < 40 && !reply.raw.destroyed; i++) {
          if (!reply.raw.write(chunk)) await drainedOrClosed(reply.raw);
        }
        reply.raw.end();
        return reply;
      },
    });
    await assert.rejects(c.listIdentities().next(), (err: unknown) => {
      assert.ok(err instanceof PlatformError, String(err));
      assert.match(
        err.message,
        /larger than the cap of 16 MiB per response \(more than \d+ bytes came before it was cut off\)/,
      );
      return true;
    });
  });

  it("a 307 from the token endpoint to another port is refused, naming the status and the target, and nothing reaches the other port", async () => {
    const other = await startElsewhere();
    const { client: c, platform: p } = await clientFor({
      token: (_req, reply) =>
        reply.code(307).header("location", `${other.url}/oauth2/token`).send(),
    });
    await assert.rejects(c.getIdentity("i-1"), (err: unknown) => {
      assert.ok(err instanceof PlatformError, String(err));
      assert.equal(err.classification, "fatal");
      const target = other.url.replace(/[.]/g, "\\.");
      assert.match(
        err.message,
        new RegExp(
          `^POST /oauth2/token: 307: the platform redirected to ${target}/oauth2/token; redirects are never followed .* Check --token-url`,
        ),
      );
      assert.doesNotMatch(err.message, new RegExp(p.clientSecret));
      return true;
    });
    assert.deepEqual(other.hits, []);
    assert.equal(p.calls["POST /oauth2/token"], 1, "asked once: a redirect is not retried");
  });
});

/** Resolves when `res` drains or closes, and leaves no listener of either behind. */
function drainedOrClosed(res: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });
}
