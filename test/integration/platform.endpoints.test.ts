import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { type Sandbox, startSandbox } from "controls-sandbox";
import { loadPlatformConfig, type PlatformConfig } from "../../src/config.ts";
import {
  createPlatformClient,
  type Identity,
  PlatformError,
  READ_SCOPES,
  WRITE_SCOPES,
} from "../../src/platform/index.ts";

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
  return { ...base, rate: 10_000, concurrency: 8, ...over };
}

describe("identity and control endpoints against the sandbox", () => {
  let sb: Sandbox;
  let cfg: PlatformConfig;

  before(async () => {
    sb = await startSandbox({ identities: 2500, seed: 5, rateLimitRps: 0, tokenRateLimitRps: 0 });
    cfg = configFor(sb, sb.credentials.clientId, sb.credentials.clientSecret);
  });
  after(async () => {
    await sb.close();
  });

  async function walk(order: "ASC" | "DESC", limit?: number): Promise<Identity[]> {
    const client = createPlatformClient(cfg, { scopes: READ_SCOPES });
    const all: Identity[] = [];
    let pages = 0;
    for await (const page of client.listIdentities({ order, limit })) {
      pages += 1;
      all.push(...page);
    }
    await client.close();
    assert.equal(pages, Math.ceil(2500 / (limit ?? 1000)));
    return all;
  }

  it("walks every identity page by page, none lost or repeated, in both orders", async () => {
    const asc = await walk("ASC");
    const desc = await walk("DESC", 700);
    assert.equal(asc.length, 2500);
    assert.equal(new Set(asc.map((i) => i.id)).size, 2500);
    assert.deepEqual(
      desc.map((i) => i.id),
      asc.map((i) => i.id).reverse(),
    );
    const withControls = asc.filter((i) => i.activeControls.length > 0);
    assert.ok(withControls.length > 0, "the sandbox migrated some flagged identities");
    for (const i of withControls) {
      for (const c of i.activeControls) assert.notEqual(c.setBy, "unknown");
    }
  });

  it("reads one identity and reports an unknown one as not_found with the platform's detail", async () => {
    const client = createPlatformClient(cfg, { scopes: READ_SCOPES });
    const [first] = await walk("ASC", 1000).then((all) => all.slice(0, 1));
    const one = await client.getIdentity((first as Identity).id);
    assert.deepEqual(one, first);
    await assert.rejects(
      client.getIdentity("00000000-0000-4000-8000-000000000000"),
      (err: unknown) => {
        assert.ok(err instanceof PlatformError);
        assert.deepEqual([err.kind, err.status, err.classification], ["not_found", 404, "fatal"]);
        assert.equal(err.endpoint, "GET /v2/identity/identities/{id}");
        assert.match(err.message, /not found/);
        return true;
      },
    );
    await client.close();
  });

  it("turns a problem+json 400 into a bad_request error carrying the platform's detail", async () => {
    const client = createPlatformClient(cfg, { scopes: READ_SCOPES });
    const pages = client.listIdentities({ limit: 5000 });
    await assert.rejects(pages.next(), (err: unknown) => {
      assert.ok(err instanceof PlatformError);
      assert.deepEqual([err.kind, err.status], ["bad_request", 400]);
      assert.match(err.detail, /limit/);
      return true;
    });
    await client.close();
  });

  it("lists all of an identity's controls across pages, deleted ones only on request", async () => {
    const [target] = await walk("ASC", 1000);
    const id = (target as Identity).id;
    const before = sb.controlsOf(id, { includeDeleted: true }).length;
    for (let i = 0; i < 1100; i++) sb.addControl(id, { type: "DORMANT", set_by: "SERVICE" });
    for (let i = 0; i < 5; i++) sb.addControl(id, { type: "CLOSED", deleted: true });
    const client = createPlatformClient(cfg, { scopes: READ_SCOPES });
    const active = await client.listIdentityControls(id);
    const all = await client.listIdentityControls(id, { includeDeleted: true });
    assert.equal(all.length, before + 1105);
    assert.equal(active.length, all.filter((c) => c.deletedAt === null).length);
    assert.equal(all.filter((c) => c.deletedAt !== null).length >= 5, true);
    assert.equal(new Set(all.map((c) => c.id)).size, all.length);
    const requests = client.metrics().endpoints["GET /v2/identity/controls"]?.requests;
    assert.equal(requests, 4, "two pages of at most 1000 for each listing");
    await client.close();
  });

  it("normalises both set_by spellings and keeps unknown values and types verbatim", async () => {
    const [, target] = await walk("ASC", 1000);
    const id = (target as Identity).id;
    sb.addControl(id, { type: "SELL_ONLY", set_by: "SET_BY_SERVICE", is_overridable: false });
    sb.addControl(id, { type: "SELL_ONLY", set_by: "SET_BY_CLIENT" });
    sb.addControl(id, { type: "SELL_ONLY", set_by: "SET_BY_PARTNER", is_overridable: false });
    sb.addControl(id, { type: "QUARANTINED", set_by: "CLIENT" });
    const client = createPlatformClient(cfg, { scopes: READ_SCOPES });
    const got = await client.listIdentityControls(id);
    const pick = (raw: string) => got.find((c) => c.setByRaw === raw);
    assert.equal(pick("SET_BY_SERVICE")?.setBy, "service");
    assert.equal(pick("SET_BY_CLIENT")?.setBy, "client");
    assert.equal(pick("SET_BY_PARTNER")?.setBy, "unknown");
    assert.equal(got.find((c) => c.type === "QUARANTINED")?.setBy, "client");
    const identity = await client.getIdentity(id);
    assert.equal(identity.activeControls.length, got.length);
    await client.close();
  });

  it("creates and deletes a control, and refuses FROZEN locally without sending anything", async () => {
    const [, , target] = await walk("ASC", 1000);
    const id = (target as Identity).id;
    const client = createPlatformClient(cfg, { scopes: WRITE_SCOPES });
    const created = await client.createIdentityControl({
      identityId: id,
      type: "CLOSED",
      reasonCode: "END_USER_REQUEST",
      reason: "test",
    });
    assert.deepEqual(
      [created.type, created.setBy, created.isOverridable, created.reasonCode],
      ["CLOSED", "client", true, "END_USER_REQUEST"],
    );
    assert.equal(sb.controlsOf(id).filter((c) => c.id === created.id).length, 1);
    assert.deepEqual(await client.deleteIdentityControl(created.id, "test done"), {
      alreadyDeleted: false,
    });
    assert.equal(sb.controlsOf(id).filter((c) => c.id === created.id).length, 0);

    const postsBefore = sb.stats().requests["POST /v2/identity/controls"]?.["200"] ?? 0;
    await assert.rejects(
      client.createIdentityControl({ identityId: id, type: "FROZEN", reasonCode: "OTHER" }),
      (err: unknown) =>
        err instanceof PlatformError && err.kind === "bad_request" && /FROZEN/.test(err.message),
    );
    await assert.rejects(
      client.createIdentityControl({ identityId: id, type: "SELL_ONLY", reasonCode: "BECAUSE" }),
      /reason_code must be one of/,
    );
    assert.equal(sb.stats().requests["POST /v2/identity/controls"]?.["200"] ?? 0, postsBefore);
    await client.close();

    const reader = createPlatformClient(cfg, { scopes: READ_SCOPES });
    await assert.rejects(
      reader.createIdentityControl({ identityId: id, type: "SELL_ONLY", reasonCode: "OTHER" }),
      (err: unknown) => err instanceof PlatformError && err.kind === "forbidden",
    );
    await reader.close();
  });

  it("refuses to delete a platform-owned control with a forbidden error", async () => {
    const [, , , target] = await walk("ASC", 1000);
    const id = (target as Identity).id;
    const service = sb.addControl(id, { type: "FROZEN", set_by: "SERVICE", is_overridable: false });
    const client = createPlatformClient(cfg, { scopes: WRITE_SCOPES });
    await assert.rejects(
      client.deleteIdentityControl(service.id),
      (err: unknown) =>
        err instanceof PlatformError && err.kind === "forbidden" && err.status === 403,
    );
    assert.equal(sb.controlsOf(id).filter((c) => c.id === service.id).length, 1);
    await client.close();
  });
});

describe("responses the sandbox never gives, from a misbehaving server", () => {
  let server: Server;
  let urls: { apiUrl: string; tokenUrl: string };
  const seen: string[] = [];

  before(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { "content-type": "application/json", ...headers });
        res.end(JSON.stringify(body));
      };
      const url = new URL(req.url ?? "/", "http://x");
      if (url.pathname === "/oauth2/token") {
        return json(200, {
          access_token: "odd-token-123456",
          token_type: "Bearer",
          expires_in: 60,
        });
      }
      if (url.pathname === "/v2/identity/controls" && req.method === "GET") {
        const control = { id: "c", type: "SELL_ONLY", set_by: "CLIENT", is_overridable: true };
        return json(200, { items: [control, { ...control, id: undefined }], next_page_cursor: "" });
      }
      if (url.pathname === "/v2/identity/controls" && req.method === "POST") {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end("{not json");
      }
      if (url.pathname.startsWith("/v2/identity/identities/")) {
        res.writeHead(302, { location: "http://127.0.0.1:9/steal" });
        return res.end();
      }
      return json(404, { title: "Not Found", status: 404, detail: "no route" });
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

  it("names the endpoint and the missing field of a malformed listing", async () => {
    const client = createPlatformClient(configFor(urls, "c", "s3cret-odd"), {
      scopes: READ_SCOPES,
    });
    await assert.rejects(client.listIdentityControls("i-1"), (err: unknown) => {
      assert.ok(err instanceof PlatformError);
      assert.equal(err.kind, "protocol");
      assert.equal(err.message, "GET /v2/identity/controls: items[1].id is missing");
      return true;
    });
    await client.close();
  });

  it("marks a 2xx create with an unreadable body ambiguous: it was committed, the record is unknown", async () => {
    const client = createPlatformClient(configFor(urls, "c", "s3cret-odd"), {
      scopes: WRITE_SCOPES,
    });
    await assert.rejects(
      client.createIdentityControl({ identityId: "i-1", type: "SELL_ONLY", reasonCode: "OTHER" }),
      (err: unknown) =>
        err instanceof PlatformError &&
        err.kind === "protocol" &&
        err.classification === "ambiguous",
    );
    await client.close();
  });

  it("never follows a redirect, so the bearer token cannot travel elsewhere; the error names the status, the target and --api-url", async () => {
    const client = createPlatformClient(configFor(urls, "c", "s3cret-odd"), {
      scopes: READ_SCOPES,
    });
    await assert.rejects(
      client.getIdentity("i-1"),
      (err: unknown) =>
        err instanceof PlatformError &&
        err.classification === "fatal" &&
        /: 302: the platform redirected to http:\/\/127\.0\.0\.1:9\/steal; redirects are never followed .* Check --api-url/.test(
          err.message,
        ),
    );
    assert.ok(!seen.some((s) => s.includes("/steal")));
    await client.close();
  });
});
