import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { inspect } from "node:util";
import { type Sandbox, startSandbox } from "controls-sandbox";
import { loadPlatformConfig, type PlatformConfig } from "../../src/config.ts";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { createLogger, type Logger } from "../../src/log.ts";
import {
  createPlatformClient,
  type PlatformClient,
  READ_SCOPES,
  WRITE_SCOPES,
} from "../../src/platform/index.ts";
import { basicCredentials } from "../../src/platform/token-manager.ts";

const IDS = [...syntheticIdentities(30, 9)].map((r) => r.id);

/** Everything a failing run could print: log lines plus every view of every thrown error. */
class Capture {
  readonly out: string[] = [];
  /** Values the client registered as secret: the bearer tokens it obtained, and the client secret. */
  readonly registered = new Set<string>();
  readonly logger: Logger;

  constructor() {
    const inner = createLogger({ level: "debug", write: (l) => this.out.push(l) });
    this.logger = {
      ...inner,
      addSecret: (v: string) => {
        this.registered.add(v);
        inner.addSecret(v);
      },
    };
  }

  async run(label: string, fn: () => Promise<unknown>): Promise<void> {
    try {
      await fn();
      this.out.push(`${label}: no error`);
    } catch (err) {
      const e = err as Error;
      this.out.push(
        e.message,
        String(e),
        e.stack ?? "",
        String(e.cause ?? ""),
        inspect(e, { depth: 10, showHidden: true }),
        JSON.stringify(e),
      );
    }
  }

  client(c: PlatformClient): void {
    this.out.push(inspect(c, { depth: 10, showHidden: true }), JSON.stringify(c));
    this.out.push(JSON.stringify(c.metrics()));
  }

  assertClean(forbidden: string[]): void {
    const text = this.out.join("\n");
    for (const s of forbidden) {
      assert.ok(s.length >= 8, "a meaningful needle");
      assert.ok(!text.includes(s), `leaked ${s.slice(0, 3)}… in captured output`);
    }
  }
}

function configFor(
  urls: { apiUrl: string; tokenUrl: string },
  id: string,
  secret: string,
  over: Partial<PlatformConfig> = {},
): PlatformConfig {
  const base = loadPlatformConfig(
    { "api-url": urls.apiUrl, "token-url": urls.tokenUrl, "client-id": id },
    { OAUTH_CLIENT_SECRET: secret },
  );
  return { ...base, rate: 10_000, retryBaseMs: 2, retryCapMs: 10, maxAttempts: 3, ...over };
}

describe("secrets and tokens never reach any output", () => {
  let sb: Sandbox;

  before(async () => {
    sb = await startSandbox({ rateLimitRps: 0, tokenRateLimitRps: 0 });
    sb.seedIdentities(
      IDS.map((id) => ({ id, user_disabled: false, admin_disabled: false })),
      { migratedFraction: 0 },
    );
  });
  after(async () => {
    await sb.close();
  });

  it("keeps them out of logs and errors of runs failing with 5xx, hangs, ambiguity and revocation", async () => {
    const cap = new Capture();
    const secret = sb.credentials.clientSecret;
    const cfg = configFor(sb, sb.credentials.clientId, secret, { timeoutMs: 150 });
    const client = createPlatformClient(cfg, { scopes: WRITE_SCOPES, logger: cap.logger });
    await cap.run("warm-up", () => client.getIdentity(IDS[0] as string));
    sb.setFaults({ failRate: 1 });
    await cap.run("5xx read", () => client.getIdentity(IDS[1] as string));
    await cap.run("5xx create", () =>
      client.createIdentityControl({
        identityId: IDS[1] as string,
        type: "SELL_ONLY",
        reasonCode: "OTHER",
      }),
    );
    sb.setFaults({ failRate: 0, hangRate: 1 });
    await cap.run("hang", () => client.listIdentityControls(IDS[2] as string));
    sb.setFaults({ hangRate: 0, ambiguousRate: 1 });
    await cap.run("ambiguous", () =>
      client.createIdentityControl({
        identityId: IDS[3] as string,
        type: "SELL_ONLY",
        reasonCode: "OTHER",
      }),
    );
    sb.setFaults({ ambiguousRate: 0 });
    sb.revokeTokens();
    await cap.run("revoked", () => client.getIdentity(IDS[4] as string));
    cap.client(client);
    await client.close();

    // The Basic credentials (base64 of id:secret) are secrets too, registered from the start.
    const basics = basicCredentials(sb.credentials.clientId, secret);
    for (const b of basics) assert.ok(cap.registered.has(b), "the Basic credential is a secret");
    const tokens = [...cap.registered].filter((v) => v !== secret && !basics.includes(v));
    assert.equal(tokens.length, 2, "a token before and one after the revocation");
    assert.ok(
      cap.out.some((l) => / DEBUG .*retry/.test(l)),
      "retries were logged",
    );
    cap.assertClean([secret, ...basics, ...tokens]);
  });

  it("keeps them out of the error and logs of a run with a wrong client secret", async () => {
    const cap = new Capture();
    const wrong = "wrong-secret-value-42";
    const bad = createPlatformClient(configFor(sb, sb.credentials.clientId, wrong), {
      scopes: READ_SCOPES,
      logger: cap.logger,
    });
    await cap.run("bad secret", () => bad.getIdentity(IDS[0] as string));
    // The run failed (a read with a wrong secret that succeeded would test nothing), and said why.
    assert.ok(!cap.out.includes("bad secret: no error"), "the read with a wrong secret failed");
    assert.ok(
      cap.out.some((l) => /oauth2\/token.*401|401.*oauth2\/token|invalid_client/.test(l)),
      `the error names the refused token request: ${cap.out[0]}`,
    );
    cap.client(bad);
    await bad.close();
    cap.assertClean([wrong, sb.credentials.clientSecret]);
  });
});

describe("secrets echoed back by a careless server are scrubbed", () => {
  let server: Server;
  let urls: { apiUrl: string; tokenUrl: string };
  const TOKEN = "echoed-token-abcdef123456";

  before(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        if (req.url?.startsWith("/oauth2/token")) {
          const auth = Buffer.from((req.headers.authorization ?? "").slice(6), "base64").toString();
          if (auth.endsWith("good-secret-xyz")) {
            res.writeHead(200, { "content-type": "application/json" });
            return res.end(
              JSON.stringify({ access_token: TOKEN, token_type: "Bearer", expires_in: 60 }),
            );
          }
          res.writeHead(401, { "content-type": "application/json" });
          return res.end(
            JSON.stringify({
              error: "invalid_client",
              error_description: `bad secret ${decodeURIComponent(auth)} ${body}`,
            }),
          );
        }
        res.writeHead(400, { "content-type": "application/problem+json" });
        res.end(
          JSON.stringify({
            title: "Bad Request",
            status: 400,
            detail: `you sent ${req.headers.authorization}`,
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    urls = {
      apiUrl: `http://127.0.0.1:${port}`,
      tokenUrl: `http://127.0.0.1:${port}/oauth2/token`,
    };
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it("replaces an echoed secret or token with [redacted] in the error", async () => {
    const cap = new Capture();
    const badSecret = "echoed-bad-secret-777";
    const bad = createPlatformClient(configFor(urls, "cid", badSecret), {
      scopes: READ_SCOPES,
      logger: cap.logger,
    });
    await cap.run("echoed secret", () => bad.getIdentity("x"));
    await bad.close();
    const good = createPlatformClient(configFor(urls, "cid", "good-secret-xyz"), {
      scopes: READ_SCOPES,
      logger: cap.logger,
    });
    await cap.run("echoed token", () => good.getIdentity("x"));
    cap.client(good);
    await good.close();
    assert.ok(
      cap.out.some((l) => l.includes("[redacted]")),
      "the echoes were there, scrubbed",
    );
    cap.assertClean([badSecret, "good-secret-xyz", TOKEN]);
  });
});
