/**
 * Secrets never leave the tool: a database password given as a `?password=` parameter (a form
 * node-postgres accepts), the client secret, the HTTP Basic credential of the OAuth client (base64
 * of `client_id:secret`) and every access token handed out are searched for in every output of
 * every command, in every report file and metrics file, and in a dump of the tool's schema.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type Sandbox, startSandbox } from "controls-sandbox";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { type CliResult, runCli } from "../helpers/cli.ts";
import { seededTarget } from "../helpers/cli-rig.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { startHostilePlatform } from "../helpers/hostile-platform.ts";
import { startProxy, type TestProxy } from "../helpers/http-proxy.ts";
import { dumpToolSchema } from "../helpers/tool-schema-dump.ts";

const DB_PASSWORD = "Pw-in-the-query-7Hq2";
const N = 300;
const SEED = 41;

/** Every file under `dir`, as text. */
function filesUnder(dir: string): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push({ path, text: readFileSync(path, "utf8") });
  }
  return out;
}

function assertNowhere(secrets: Record<string, string>, places: Record<string, string>) {
  for (const [what, secret] of Object.entries(secrets)) {
    for (const [where, text] of Object.entries(places)) {
      assert.ok(!text.includes(secret), `${what} leaked into ${where}`);
    }
  }
}

const outputs = (name: string, r: CliResult) => ({
  [`${name} stdout`]: r.stdout,
  [`${name} stderr`]: r.stderr,
});

for (const backend of backends) {
  describe(`secrets on ${backend.name}`, { timeout: 240_000 }, () => {
    let sandbox: Sandbox;
    let tokenProxy: TestProxy;
    const tokens: string[] = [];
    let target: TestTarget;
    let out: string;
    let args: string[];
    let env: Record<string, string>;
    let basic: string;

    before(async () => {
      sandbox = await startSandbox({ port: 0, rateLimitRps: 0, tokenRateLimitRps: 0 });
      sandbox.seedIdentities(syntheticIdentities(N, SEED), {
        migratedFraction: 0.3,
        driftFraction: 0.2,
        seed: SEED,
      });
      target = await seededTarget(backend, { identities: N, seed: SEED, withAnomalies: true });
      out = mkdtempSync(join(tmpdir(), "cm-secrets-"));
      // The token endpoint through a recording proxy: the test learns every token handed out.
      tokenProxy = await startProxy(sandbox.tokenUrl);
      tokenProxy.rewrite = (_r, body) => {
        const token = (JSON.parse(body) as { access_token?: string }).access_token;
        if (token) tokens.push(token);
        return body;
      };
      const { clientId, clientSecret } = sandbox.credentials;
      basic = Buffer.from(`${clientId}:${clientSecret}`).toString("base64");
      env = {
        API_BASE_URL: sandbox.apiUrl,
        OAUTH_TOKEN_URL: `${tokenProxy.url}${new URL(sandbox.tokenUrl).pathname}`,
        OAUTH_CLIENT_ID: clientId,
        OAUTH_CLIENT_SECRET: clientSecret,
      };
      if (backend.name === "postgres") {
        // The server trusts loopback and ignores it; the tool must not repeat it anywhere.
        const url = new URL(target.args[1]!);
        url.searchParams.set("password", DB_PASSWORD);
        args = ["--database-url", url.toString()];
      } else {
        args = [...target.args];
      }
    });
    after(async () => {
      await tokenProxy.close();
      await sandbox.close();
      await target.drop();
      rmSync(out, { recursive: true, force: true });
    });

    it("no output (stdout, stderr: the debug log), report file, metrics file or stored row holds the database password, the client secret, the client's Basic credential or any token", async () => {
      const common = [
        "--no-progress",
        "--log-level",
        "debug",
        "--allow-rate-above-limit",
        "--rate",
        "500",
        ...args,
      ];
      const metrics = (mode: string) => ["--metrics-file", join(out, `${mode}.prom`)];
      const plan = await runCli(
        ["plan", "--json", "--all", "--out", join(out, "plan"), ...metrics("plan"), ...common],
        env,
      );
      assert.equal(plan.code, 2, plan.stderr);
      const apply = await runCli(
        ["apply", "--yes", "--json", "--out", join(out, "apply"), ...metrics("apply"), ...common],
        env,
      );
      assert.equal(apply.code, 0, apply.stderr);
      assert.ok(sandbox.stats().writes.creates > 0, "the apply wrote to the platform");
      const reconcile = await runCli(
        [
          ...["reconcile", "--yes", "--prune", "--json", "--out", join(out, "reconcile")],
          ...metrics("reconcile"),
          ...common,
        ],
        env,
      );
      assert.ok([0, 2].includes(reconcile.code ?? -1), reconcile.stderr);
      assert.ok(tokens.length >= 3, `a token for each run, got ${tokens.length}`);
      const runs = await runCli(["runs", "--json", ...args, "--log-level", "debug"], env);
      const runId = JSON.parse(plan.stdout).run_id as string;
      const report = await runCli(
        ["report", runId, "--out", join(out, "report"), ...args, "--log-level", "debug"],
        env,
      );
      assert.equal(report.code, 0, report.stderr);
      if (backend.name === "postgres") {
        assert.match(
          plan.stderr,
          /Connected to PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/\w+\?password=\*\*\*/,
        );
      }

      const h = await target.open();
      let dump: string;
      let options: Record<string, unknown>;
      try {
        dump = await dumpToolSchema(h);
        options = (
          await h.db
            .selectFrom("controls_migration.runs")
            .select("options")
            .where("id", "=", runId)
            .executeTakeFirstOrThrow()
        ).options;
      } finally {
        await h.close();
      }
      // The run records where the database is, never how to log in to it.
      if (backend.name === "postgres") {
        assert.deepEqual(Object.keys(options.database as object).sort(), [
          "database",
          "host",
          "port",
        ]);
      }

      const places: Record<string, string> = {
        ...outputs("plan", plan),
        ...outputs("apply", apply),
        ...outputs("reconcile", reconcile),
        ...outputs("runs", runs),
        ...outputs("report", report),
        "the tool's schema": dump,
      };
      const files = filesUnder(out);
      for (const f of files) places[f.path] = f.text;
      assert.ok(Object.keys(places).length > 15, "every report file was read");
      for (const needed of [
        "plan.prom",
        "apply.prom",
        "reconcile.prom",
        "summary.json",
        "diff.csv",
      ]) {
        assert.ok(
          files.some((f) => basename(f.path) === needed),
          `${needed} was written and is searched`,
        );
      }
      assert.match(plan.stderr, /DEBUG/, "the debug log is on stderr");
      const secrets: Record<string, string> = {
        "the ?password= password": DB_PASSWORD,
        "the Basic credential": basic,
        "the client secret": sandbox.credentials.clientSecret,
        ...Object.fromEntries(tokens.map((t, i) => [`token ${i + 1}`, t])),
      };
      for (const [what, secret] of Object.entries(secrets)) {
        assert.ok(secret.length >= 8, `${what} is a real value`);
      }
      assertNowhere(secrets, places);
    });

    it("a token endpoint that echoes the Authorization header gets it back redacted", async () => {
      const p = await startHostilePlatform({
        token: (req, reply) =>
          reply.code(400).send({
            error: "invalid_request",
            error_description: `bad header: ${req.headers.authorization}`,
          }),
      });
      try {
        const echo = Buffer.from(`${p.clientId}:${p.clientSecret}`).toString("base64");
        const r = await runCli(
          ["plan", "--no-progress", "--log-level", "debug", "--out", join(out, "echo"), ...args],
          p.env,
        );
        assert.equal(r.code, 1, r.stderr);
        assert.match(r.stderr, /ERROR .*bad header: Basic \[redacted\]/);
        assertNowhere(
          { "the Basic credential": echo, "the client secret": p.clientSecret },
          outputs("plan", r),
        );
      } finally {
        await p.close();
      }
    });

    it("a connection error names the database but not its password", {
      skip:
        backend.name !== "postgres" &&
        "PGlite has no connection URL: the embedded database is a folder, not a server",
    }, async () => {
      const url = new URL(args[1]!);
      url.port = "1";
      const r = await runCli(["runs", "--database-url", url.toString()], env);
      assert.equal(r.code, 1);
      assert.match(
        r.stderr,
        /Cannot connect to PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:1\/\w+\?password=\*\*\*/,
      );
      assertNowhere({ "the ?password= password": DB_PASSWORD }, outputs("runs", r));
    });
  });
}
