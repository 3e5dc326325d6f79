import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runSandboxCli, type SandboxInfo, spawnSandbox } from "../helpers/sandbox-process.ts";

async function basicToken(info: SandboxInfo): Promise<string> {
  const res = await fetch(info.token_url, {
    method: "POST",
    headers: {
      authorization: `Basic ${Buffer.from(`${info.client_id}:${info.client_secret}`).toString("base64")}`,
    },
    body: new URLSearchParams({ grant_type: "client_credentials" }),
  });
  assert.equal(res.status, 200);
  return ((await res.json()) as { access_token: string }).access_token;
}

describe("controls-sandbox (the package's bin)", () => {
  it("starts with 10,000 identities, prints one JSON line, answers a token request and a controls listing, and stops on SIGTERM with exit 0", async () => {
    const proc = await spawnSandbox(["--port", "0", "--identities", "10000"]);
    try {
      const { info } = proc;
      assert.match(info.api_url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(info.token_url, `${info.api_url}/oauth2/token`);
      assert.equal(info.admin_url, `${info.api_url}/__sandbox`);
      assert.equal(proc.stdout().trim().split("\n").length, 1, "exactly one line on stdout");
      // The export lines follow the JSON line on stderr; no log line carries the secret.
      for (let i = 0; i < 100 && !proc.stderr().includes("sandbox listening"); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const lines = proc.stderr().split("\n");
      const exports = Object.fromEntries(
        lines
          .map((l) => /^export ([A-Z_]+)='([^']*)'$/.exec(l))
          .filter((m) => m !== null)
          .map((m) => [m[1], m[2]]),
      );
      assert.deepEqual(exports, {
        API_BASE_URL: info.api_url,
        OAUTH_TOKEN_URL: info.token_url,
        OAUTH_CLIENT_ID: info.client_id,
        OAUTH_CLIENT_SECRET: info.client_secret,
      });
      const carrying = lines.filter((l) => l.includes(info.client_secret));
      assert.deepEqual(carrying, [`export OAUTH_CLIENT_SECRET='${info.client_secret}'`]);

      const token = await basicToken(info);
      const auth = { authorization: `Bearer ${token}` };
      const page = (await (
        await fetch(`${info.api_url}/v2/identity/identities?limit=1000`, { headers: auth })
      ).json()) as { items: { id: string; status_details: { active_controls: unknown[] } }[] };
      const withControls = page.items.find((i) => i.status_details.active_controls.length > 0);
      assert.ok(withControls, "some identities start migrated");
      const list = await fetch(
        `${info.api_url}/v2/identity/controls?identity_id=${withControls.id}`,
        { headers: auth },
      );
      assert.equal(list.status, 200);
      const body = (await list.json()) as { items: unknown[]; next_page_cursor: string };
      assert.deepEqual(body.items, withControls.status_details.active_controls);
      const stats = (await (await fetch(`${info.admin_url}/stats`)).json()) as {
        identities: number;
      };
      assert.equal(stats.identities, 10_000);
    } finally {
      assert.equal(await proc.stop("SIGTERM"), 0);
    }
  });

  it("stops on SIGINT with exit 0, and a second sandbox on its port is refused naming --port", async () => {
    const proc = await spawnSandbox(["--port", "0", "--rate-limit", "0"]);
    const port = new URL(proc.info.api_url).port;
    const clash = await runSandboxCli(["--port", port]);
    assert.equal(clash.code, 1);
    assert.match(clash.stderr, new RegExp(`--port ${port} cannot be bound \\(EADDRINUSE\\)`));
    assert.equal(await proc.stop("SIGINT"), 0);
    assert.match(proc.stderr(), /sandbox stopped/);
  });

  it("refuses a bad or unknown flag with a message naming it on stderr, nothing on stdout, and exit 1", async () => {
    // Every flag rule is covered in-process by sandbox.cli-options.test.ts; these show the wiring.
    const cases: [string[], RegExp][] = [
      [["--port", "0", "--fail-rate", "2"], /--fail-rate must be at most 1, got 2/],
      [["--port", "0", "--fail-rte", "0.1"], /Unknown argument: fail-rte/],
      [["--host", "0.0.0.0"], /--host 0\.0\.0\.0 is not a loopback address.*--allow-remote/],
    ];
    const runs = await Promise.all(cases.map(([args]) => runSandboxCli(args)));
    runs.forEach((run, i) => {
      const [args, message] = cases[i]!;
      assert.equal(run.code, 1, `${args.join(" ")} exits 1`);
      assert.match(run.stderr, message);
      assert.equal(run.stdout, "");
    });
  });

  it("explains itself with --help, flags and examples included, and what each --updated-at-policy rehearses", async () => {
    const run = await runSandboxCli(["--help"]);
    assert.equal(run.code, 0);
    for (const flag of [
      "--port",
      "--identities",
      "--drift-fraction",
      "--hang-rate",
      "--allow-remote",
      "--updated-at-policy",
    ]) {
      assert.ok(run.stdout.includes(flag), `--help mentions ${flag}`);
    }
    assert.match(run.stdout, /Examples:/);
    const text = run.stdout.replace(/\s+/g, " ");
    assert.match(text, /identity-fields \(only the identity's own fields/, "--updated-at-policy");
    assert.match(text, /none \(nothing after creation/);
  });
});
