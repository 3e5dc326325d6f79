/**
 * `--log-format json` through the CLI: stderr is JSON lines only (level, time, message, run_id,
 * and the run's counts at the end), and no secret reaches it: the client secret, a bearer token
 * the platform echoes back, and the database password of the connection URL.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { startSandbox } from "controls-sandbox";
import { syntheticIdentities } from "../../src/contract/index.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
import { runCli } from "../helpers/cli.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { startHostilePlatform } from "../helpers/hostile-platform.ts";

const DB_PASSWORD = "Json-Log-Pw-93";
const N = 300;

/** stderr as JSON objects; fails on any line that is not one. */
function jsonLines(stderr: string): Record<string, unknown>[] {
  return stderr
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        return assert.fail(`not a JSON line on stderr: ${l}`);
      }
    });
}

for (const backend of backends) {
  describe(`--log-format json through the CLI on ${backend.name}`, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    let dbArgs: string[];
    const out = mkdtempSync(join(tmpdir(), "cm-jsonlog-"));

    before(async () => {
      sandbox = await startSandbox({ port: 0, rateLimitRps: 0, tokenRateLimitRps: 0 });
      sandbox.seedIdentities(syntheticIdentities(N, 5), { migratedFraction: 0.5, seed: 5 });
      target = await backend.target();
      const seeded = await runCli([
        "db",
        "seed",
        "--identities",
        `${N}`,
        "--seed",
        "5",
        ...target.args,
      ]);
      assert.equal(seeded.code, 0, seeded.stderr);
      dbArgs = [...target.args];
      if (backend.name === "postgres") {
        // The test server trusts loopback, so a password in the URL is accepted and unused.
        const url = new URL(dbArgs[1]!);
        url.password = DB_PASSWORD;
        dbArgs[1] = url.toString();
      }
    });

    after(async () => {
      await sandbox.close();
      await target.drop();
      rmSync(out, { recursive: true, force: true });
    });

    it("prints only JSON lines with level, time, message and the run id (from the run's first line, the one that says it started), ending with the run's counts, and no secret", async () => {
      const r = await runCli(
        [
          "plan",
          "--log-format",
          "json",
          "--log-level",
          "debug",
          "--out",
          join(out, "plan"),
          ...dbArgs,
        ],
        {
          API_BASE_URL: sandbox.apiUrl,
          OAUTH_TOKEN_URL: sandbox.tokenUrl,
          OAUTH_CLIENT_ID: sandbox.credentials.clientId,
          OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
        },
      );
      assert.equal(r.code, 2, r.stderr);
      const summary = JSON.parse(
        readFileSync(join(out, "plan", "summary.json"), "utf8"),
      ) as RunSummary;
      const lines = jsonLines(r.stderr);
      assert.ok(lines.length >= 3);
      for (const l of lines) {
        assert.ok(["error", "warn", "info", "debug"].includes(String(l.level)), String(l.level));
        assert.ok(!Number.isNaN(Date.parse(String(l.time))));
        assert.equal(typeof l.message, "string");
      }
      const started = lines.findIndex((l) => String(l.message).includes("started"));
      assert.ok(started >= 0);
      // From the line that says the run started on, every line names it.
      for (const l of lines.slice(started)) assert.equal(l.run_id, summary.run_id);
      const last = lines[lines.length - 1]!;
      assert.equal(last.exit_code, 2);
      assert.deepEqual(last.findings, summary.findings);
      assert.deepEqual(last.outcomes, summary.outcomes);
      assert.ok(!r.stderr.includes(sandbox.credentials.clientSecret));
      assert.ok(!r.stderr.includes(DB_PASSWORD));
    });

    it("redacts a bearer token the platform echoes back in an error", async () => {
      const p = await startHostilePlatform({
        identitiesList: (req, reply) =>
          reply.code(400).send({
            type: "about:blank",
            title: "Bad Request",
            status: 400,
            detail: `bad header: ${req.headers.authorization}`,
          }),
      });
      try {
        const r = await runCli(
          [
            "plan",
            "--log-format",
            "json",
            "--state",
            "bulk",
            "--out",
            join(out, "echo"),
            ...dbArgs,
          ],
          p.env,
        );
        assert.equal(r.code, 1, r.stderr);
        const errors = jsonLines(r.stderr).filter((l) => l.level === "error");
        assert.ok(
          errors.some((l) => String(l.message).includes("bad header: Bearer [redacted]")),
          r.stderr,
        );
        assert.ok(!r.stderr.includes("hostile-token"));
        assert.ok(!r.stderr.includes(p.clientSecret));
      } finally {
        await p.close();
      }
    });
  });
}
