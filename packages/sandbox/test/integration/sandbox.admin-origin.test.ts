/**
 * The admin surface has no auth; a web page must not reach it through DNS rebinding (a hostile
 * name resolved to 127.0.0.1) or a cross-site request. Sent with node:http, which, unlike fetch,
 * lets a test set the Host header.
 */
import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import { adminRefusal, isLoopbackName } from "../../src/gateway/admin-origin.ts";
import { type Sandbox, startSandbox } from "../../src/index.ts";

function send(
  sandbox: Sandbox,
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const url = new URL(path, sandbox.apiUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method, headers },
      (res) => {
        let body = "";
        res.on("data", (d) => {
          body += d;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("sandbox admin surface against DNS rebinding and cross-site requests", () => {
  let sandbox: Sandbox;
  let port: string;
  before(async () => {
    sandbox = await startSandbox({ identities: 10, rateLimitRps: 0, tokenRateLimitRps: 0 });
    port = new URL(sandbox.apiUrl).port;
  });
  after(() => sandbox.close());

  it("refuses an admin request whose Host is not a loopback name with 403, and changes nothing", async () => {
    for (const host of [
      `rebind.example:${port}`,
      "192.168.1.10",
      `127.0.0.1.evil.example:${port}`,
    ]) {
      const reset = await send(sandbox, "POST", "/__sandbox/reset", { host });
      assert.equal(reset.status, 403, host);
      assert.match(JSON.parse(reset.body).detail, /only requests addressed to a loopback host/);
      const stats = await send(sandbox, "GET", "/__sandbox/stats", { host });
      assert.equal(stats.status, 403, host);
    }
    assert.equal(sandbox.stats().identities, 10, "the reset was refused");
  });

  it("refuses an admin request carrying a non-loopback Origin, and accepts loopback ones", async () => {
    for (const origin of ["https://evil.example", "null", "http://127.0.0.1.evil.example"]) {
      const res = await send(sandbox, "POST", "/__sandbox/revoke-tokens", {
        host: `127.0.0.1:${port}`,
        origin,
      });
      assert.equal(res.status, 403, origin);
      assert.match(JSON.parse(res.body).detail, /refuses cross-site requests/);
    }
    for (const [host, origin] of [
      [`localhost:${port}`, `http://localhost:${port}`],
      [`127.0.0.1:${port}`, "http://127.0.0.1:3000"],
      [`[::1]:${port}`, `http://[::1]:${port}`],
    ] as const) {
      const res = await send(sandbox, "GET", "/__sandbox/stats", { host, origin });
      assert.equal(res.status, 200, `${host} ${origin}`);
    }
    assert.equal(
      (await send(sandbox, "GET", "/__sandbox/stats", { host: `127.0.0.1:${port}` })).status,
      200,
    );
  });

  it("leaves the platform API to any Host, as a remote sandbox (--allow-remote) needs", async () => {
    const res = await send(sandbox, "GET", "/v2/identity/identities", {
      host: `sandbox.lan:${port}`,
    });
    assert.equal(res.status, 401, "reached the API's auth, not the admin guard");
  });

  it("tells loopback names and addresses from others", () => {
    for (const h of [
      "localhost",
      "LOCALHOST",
      "app.localhost",
      "127.0.0.1",
      "127.255.0.9",
      "::1",
      "[::1]",
      "::ffff:127.0.0.1",
    ]) {
      assert.equal(isLoopbackName(h), true, h);
    }
    for (const h of [
      "localhost.example",
      "128.0.0.1",
      "10.0.0.1",
      "0.0.0.0",
      "::",
      "example.com",
      "",
    ]) {
      assert.equal(isLoopbackName(h), false, h);
    }
    assert.equal(adminRefusal(undefined, undefined)?.includes("loopback host"), true);
  });
});
