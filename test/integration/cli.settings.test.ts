import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { startSandbox } from "controls-sandbox";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { runCli } from "../helpers/cli.ts";

/** A PGlite folder with a seeded source relation, for commands that get as far as reading it. */
async function seededDataDir(home: string): Promise<string[]> {
  const args = ["--data-dir", join(home, "db")];
  const r = await runCli(["db", "seed", "--identities", "200", ...args]);
  assert.equal(r.code, 0, r.stderr);
  return args;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

describe("settings are checked before any work", () => {
  let sandbox: Sandbox;
  let env: Record<string, string>;
  let db: string[];
  let home: string;
  const requests = () =>
    Object.values(sandbox.stats().requests)
      .flatMap((byStatus) => Object.values(byStatus))
      .reduce((a, b) => a + b, 0);

  /** `plan --out out` exits 1 at once, naming --out and saying `why`, before any run starts. */
  async function assertOutRefused(out: string, why: RegExp): Promise<void> {
    const r = await runCli(["plan", "--out", out, ...db], env);
    assert.equal(r.code, 1, `${out}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`--out ${out.replaceAll("/", "\\/")}`));
    assert.match(r.stderr, why);
    assert.doesNotMatch(r.stderr, /Run \S+ \(plan\) started/);
  }

  before(async () => {
    sandbox = await startSandbox({ port: 0, rateLimitRps: 0, tokenRateLimitRps: 0 });
    sandbox.seedIdentities(syntheticIdentities(200, 1), { migratedFraction: 0 });
    env = {
      API_BASE_URL: sandbox.apiUrl,
      OAUTH_TOKEN_URL: sandbox.tokenUrl,
      OAUTH_CLIENT_ID: sandbox.credentials.clientId,
      OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
    };
    home = mkdtempSync(join(tmpdir(), "cm-settings-"));
    db = await seededDataDir(home);
  });
  after(async () => {
    await sandbox.close();
    rmSync(home, { recursive: true, force: true });
  });

  it("reports every missing platform setting at once, each with its flag and env var", async () => {
    const r = await runCli(["plan", "--batch-size", "abc", ...db], {
      API_BASE_URL: undefined,
      OAUTH_TOKEN_URL: undefined,
      OAUTH_CLIENT_ID: undefined,
      OAUTH_CLIENT_SECRET: undefined,
    });
    assert.equal(r.code, 1);
    for (const needle of [
      "--api-url (or env API_BASE_URL)",
      "--token-url (or env OAUTH_TOKEN_URL)",
      "--client-id (or env OAUTH_CLIENT_ID)",
      "env OAUTH_CLIENT_SECRET or pass --client-secret-file",
      '--batch-size must be a whole number, got "abc"',
    ]) {
      assert.ok(r.stderr.includes(needle), `${needle} in:\n${r.stderr}`);
    }
  });

  it("refuses --rate above the platform's 50 rps, saying why, unless --allow-rate-above-limit", async () => {
    const refused = await runCli(["plan", "--rate", "60", ...db], env);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /--rate 60 is above the platform's limit of 50/);
    assert.match(refused.stderr, /one 429 stops every request from your address/i);
    assert.match(refused.stderr, /--allow-rate-above-limit/);
    assert.equal(requests(), 0, "nothing was sent");
    const allowed = await runCli(
      ["plan", "--rate", "60", "--allow-rate-above-limit", "--no-progress", ...db],
      env,
    );
    assert.equal(allowed.code, 2, allowed.stderr);
    assert.ok(requests() > 0, "the allowed plan did talk to the platform");
  });

  it("refuses an --out that is a file, lies under a file, or lies under /proc or /sys, before any request", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cm-out-"));
    const file = join(dir, "a-file");
    writeFileSync(file, "x");
    const before = requests();
    const cases: [string, RegExp][] = [
      [file, /is a file, not a folder/],
      [join(file, "sub"), /cannot be created or written \(ENOTDIR\)/],
      ["/proc/nope", /under \/proc or \/sys/],
      ["/sys/kernel/nope", /under \/proc or \/sys/],
    ];
    try {
      for (const [out, why] of cases) await assertOutRefused(out, why);
      assert.equal(requests(), before, "no request was sent");
      const report = await runCli(["report", "20990101-000000-dead", "--out", file, ...db]);
      assert.equal(report.code, 1);
      assert.match(report.stderr, /--out \S+ is a file, not a folder/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Running as root, permission bits do not stop a write: the case proves nothing there.
  const root = process.getuid?.() === 0;
  it("refuses an --out under a folder it may not write (EACCES), before any request", {
    skip: root ? "running as root: permission bits do not stop root" : false,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "cm-out-"));
    const locked = join(dir, "locked");
    mkdirSync(locked);
    chmodSync(locked, 0o500);
    const before = requests();
    try {
      await assertOutRefused(join(locked, "sub"), /cannot be created or written \(EACCES\)/);
      assert.equal(requests(), before, "no request was sent");
    } finally {
      chmodSync(locked, 0o700);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("names --api-url when the API refuses connections and --token-url when it answers 404", async () => {
    const port = await closedPort();
    const refused = await runCli(
      ["plan", "--api-url", `http://127.0.0.1:${port}`, "--max-attempts", "1", ...db],
      env,
    );
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /ECONNREFUSED[^\n]*; check --api-url/);

    const notFound: Server = createServer((_q, res) => {
      res.writeHead(404, { "content-type": "text/plain" }).end("no such page");
    });
    await new Promise<void>((r) => notFound.listen(0, "127.0.0.1", r));
    const at = `http://127.0.0.1:${(notFound.address() as AddressInfo).port}/oauth2/token`;
    try {
      const r = await runCli(["plan", "--token-url", at, ...db], env);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /404[^\n]*check --token-url/);
    } finally {
      await new Promise((r) => notFound.close(r));
    }
  });

  it("names --api-url and the URL used when the identities listing answers 404 (a wrong API path)", async () => {
    const wrong = `${sandbox.apiUrl}/api`;
    const r = await runCli(["plan", "--api-url", wrong, "--state", "bulk", ...db], env);
    assert.equal(r.code, 1, r.stderr);
    const said = r.stderr.split("\n").find((l) => /GET \/v2\/identity\/identities: 404/.test(l));
    assert.ok(said, r.stderr);
    assert.ok(said.includes(`check --api-url`), said);
    assert.ok(said.includes(`--api-url ${wrong}:`), said);
  });
});
