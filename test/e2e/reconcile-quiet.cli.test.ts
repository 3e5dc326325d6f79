/**
 * Reconcile is quiet when the client has nothing to do (issue 29 §5): an identity the platform
 * answers 404 for is never sent a create (filtered reads each candidate it does not list by id,
 * issue 27), a create answered 404 (the identity went between its read and its create) is
 * reported once and not sent again while the platform does not know the identity, and `--exit-on`
 * decides which findings left make the exit code 2.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { startSandbox } from "controls-sandbox";
import { prng, uuidFrom } from "../../src/contract/index.ts";
import { runCliIn } from "../helpers/cli-in-dir.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { startProxy, type TestProxy } from "../helpers/http-proxy.ts";
import { sourceTarget } from "../helpers/read-world.ts";

const rand = prng(2905);
const id = Object.fromEntries("ACEIV".split("").map((k) => [k, uuidFrom(rand)])) as Record<
  string,
  string
>;
const POST = "POST /v2/identity/controls";
const READ = "GET /v2/identity/identities/{id}";

interface World {
  sandbox: Sandbox;
  /** Between the tool and the sandbox: what it sent, and a hook on each answer. */
  proxy: TestProxy;
  target: TestTarget;
  env: Record<string, string>;
  dir: string;
}

/** A sandbox holding `onPlatform` (none with a control) and a source of `rows`. */
async function world(
  backend: (typeof backends)[number],
  rows: [string, boolean, boolean][],
  onPlatform: string[],
): Promise<World> {
  const sandbox = await startSandbox({ port: 0, rateLimitRps: 0, tokenRateLimitRps: 0 });
  sandbox.seedIdentities(
    rows
      .filter(([k]) => onPlatform.includes(k))
      .map(([k, u, a]) => ({ id: id[k]!, user_disabled: u, admin_disabled: a })),
    { migratedFraction: 0, driftFraction: 0 },
  );
  const target = await sourceTarget(
    backend,
    rows.map(([k, u, a]) => [id[k]!, u, a] as const),
  );
  const proxy = await startProxy(sandbox.apiUrl);
  const env = {
    API_BASE_URL: proxy.url,
    OAUTH_TOKEN_URL: sandbox.tokenUrl,
    OAUTH_CLIENT_ID: sandbox.credentials.clientId,
    OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
  };
  return { sandbox, proxy, target, env, dir: mkdtempSync(join(tmpdir(), "cm-quiet-")) };
}

let runs = 0;
async function reconcile(w: World, ...extra: string[]) {
  runs += 1;
  const out = join(w.dir, `run-${runs}`);
  const args = ["reconcile", "--yes", "--json", "--no-progress", "--out", out, ...extra];
  const r = await runCliIn(w.dir, [...args, ...w.target.args], w.env);
  assert.ok(r.stdout.trim().startsWith("{"), r.stderr);
  return { code: r.code, summary: JSON.parse(r.stdout), stderr: r.stderr };
}

for (const backend of backends) {
  describe(`reconcile's 404 memory and --exit-on on ${backend.name}`, () => {
    const worlds: World[] = [];
    after(async () => {
      for (const w of worlds) {
        await w.proxy.close();
        await w.sandbox.close();
        await w.target.drop();
        rmSync(w.dir, { recursive: true, force: true });
      }
    });

    describe("an identity the platform answered 404 for", () => {
      let w: World;
      before(async () => {
        w = await world(
          backend,
          [
            ["A", true, false],
            ["I", true, false],
          ],
          ["A"],
        );
        worlds.push(w);
      });

      it("is never sent a create: filtered reads it by id, and creates its control once the platform knows it", async () => {
        const first = await reconcile(w, "--state", "filtered");
        assert.equal(first.code, 0, first.stderr);
        assert.equal(
          first.summary.requests[READ].count,
          2,
          "A and I hold no SELL_ONLY: read by id",
        );
        assert.equal(first.summary.requests[POST].count, 1, "A's create only");
        assert.deepEqual(first.summary.outcomes, { "succeeded:created": 1 });
        assert.equal(first.summary.findings.identity_not_found, 1, "I");

        const second = await reconcile(w, "--state", "filtered");
        assert.equal(second.code, 0, second.stderr);
        assert.equal(second.summary.requests[POST]?.count ?? 0, 0, "I is not sent");
        assert.equal(second.summary.findings.identity_not_found, 1);

        // The platform learns I; the SELL_ONLY listing cannot show it, its read does.
        w.sandbox.seedIdentities([{ id: id.I!, user_disabled: false, admin_disabled: false }], {
          migratedFraction: 0,
          driftFraction: 0,
        });
        const third = await reconcile(w, "--state", "filtered");
        assert.equal(third.code, 0, third.stderr);
        assert.equal(third.summary.findings.identity_not_found, 0);
        assert.deepEqual(third.summary.outcomes, { "succeeded:created": 1 });
        const held = w.sandbox.controlsOf(id.I!).filter((c) => c.type === "SELL_ONLY");
        assert.equal(held.length, 1);
      });

      it("whose identity went between its read and its create is answered 404, reported identity_not_found, and not sent again while the platform does not know it", async () => {
        const v = await world(backend, [["V", true, false]], ["V"]);
        worlds.push(v);
        // The identity goes once its read has been answered, before its create is sent.
        v.proxy.rewrite = (r, body) => {
          if (r.method === "GET" && r.url === `/v2/identity/identities/${id.V!}`) {
            v.sandbox.removeIdentity(id.V!);
          }
          return body;
        };
        const first = await reconcile(v, "--state", "filtered");
        assert.equal(first.code, 0, first.stderr);
        assert.equal(first.summary.requests[POST].count, 1);
        assert.deepEqual(first.summary.outcomes, { "failed:identity_not_found": 1 });
        assert.equal(first.summary.findings.identity_not_found, 1, "one finding per fact");
        assert.equal(first.summary.findings.missing_client_control, 0);

        v.proxy.rewrite = null;
        const second = await reconcile(v, "--state", "filtered");
        assert.equal(second.code, 0, second.stderr);
        assert.equal(second.summary.requests[POST]?.count ?? 0, 0, "V is not sent again");
        assert.equal(second.summary.findings.identity_not_found, 1);
        assert.deepEqual(second.summary.outcomes, {});
      });
    });

    describe("--exit-on", () => {
      let w: World;
      before(async () => {
        w = await world(
          backend,
          [
            ["C", false, true],
            ["E", false, false],
          ],
          ["C", "E"],
        );
        worlds.push(w);
      });

      it("exits 0 by default and 2 with --exit-on any when only a platform-owned finding is left, and 2 by default once client work is left", async () => {
        const byDefault = await reconcile(w);
        assert.equal(byDefault.summary.findings.awaiting_platform_migration, 1);
        assert.equal(byDefault.code, 0, byDefault.stderr);
        assert.equal((await reconcile(w, "--exit-on", "client")).code, 0);
        assert.equal((await reconcile(w, "--exit-on", "any")).code, 2);

        w.sandbox.addControl(id.E!, { type: "SELL_ONLY", set_by: "CLIENT", is_overridable: true });
        const client = await reconcile(w);
        assert.equal(client.summary.findings.unexpected_client_control, 1);
        assert.equal(client.code, 2, "an unexpected client control is the client's to decide");
      });
    });
  });
}
