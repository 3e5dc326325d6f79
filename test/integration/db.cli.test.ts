import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { migrations } from "../../migrations/index.ts";
import { loadSourceConfig } from "../../src/config.ts";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { readSource } from "../../src/db/source/source-reader.ts";
import { CLI_ENTRY } from "../helpers/cli-entry.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { scratchCwd } from "../helpers/scratch-cwd.ts";

const ALL = Object.keys(migrations);

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real CLI in a child process, with no database or source settings inherited from env. */
function runCli(args: readonly string[]): Promise<CliResult> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => k !== "DATABASE_URL" && !k.startsWith("CONTROLS_")),
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI_ENTRY, ...args, "--no-progress"], {
      cwd: scratchCwd(),
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const STACK_LINE = /^\s+at .+\(.+:\d+:\d+\)$/m;

for (const b of backends) {
  describe(`controls-migrate db on ${b.name}`, () => {
    let target: TestTarget;
    before(async () => {
      target = await b.target();
    });
    after(() => target.drop());

    it("db migrate applies every migration, then says the schema is up to date and applies nothing", async () => {
      const first = await runCli(["db", "migrate", ...target.args]);
      assert.equal(first.code, 0, first.stderr);
      assert.ok(
        first.stdout.startsWith(`Applied ${ALL.length} migrations: ${ALL.join(", ")}.`),
        first.stdout,
      );
      const second = await runCli(["db", "migrate", ...target.args]);
      assert.equal(second.code, 0, second.stderr);
      assert.equal(
        second.stdout,
        `Database schema is up to date (${ALL.length} migrations); nothing applied.\n`,
      );
    });

    it("db migrate --json prints what it applied as one JSON line", async () => {
      const json = await runCli(["db", "migrate", "--json", ...target.args]);
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual(JSON.parse(json.stdout), {
        backend: b.name,
        applied: [],
        known: ALL.length,
      });
    });

    it("db seed --identities 100000 --seed 7 writes exactly the counts the reader reads back", async () => {
      const seeded = await runCli([
        "db",
        "seed",
        "--identities",
        "100000",
        "--seed",
        "7",
        "--json",
        ...target.args,
      ]);
      assert.equal(seeded.code, 0, seeded.stderr);
      const result = JSON.parse(seeded.stdout);
      const expected = { both: 0, userOnly: 0, adminOnly: 0, neither: 0 };
      for (const s of syntheticIdentities(100_000, 7)) {
        if (s.user_disabled && s.admin_disabled) expected.both++;
        else if (s.user_disabled) expected.userOnly++;
        else if (s.admin_disabled) expected.adminOnly++;
        else expected.neither++;
      }
      assert.deepEqual(result.combinations, expected);
      assert.equal(result.rowsWritten, 100_000);

      const handle = await target.open();
      try {
        const read = { both: 0, userOnly: 0, adminOnly: 0, neither: 0 };
        let rows = 0;
        for await (const batch of readSource(handle.db, loadSourceConfig({}, {}))) {
          for (const r of batch.rows) {
            rows++;
            assert.equal(r.valid, true);
            if (r.userDisabled && r.adminDisabled) read.both++;
            else if (r.userDisabled) read.userOnly++;
            else if (r.adminDisabled) read.adminOnly++;
            else read.neither++;
          }
        }
        assert.equal(rows, 100_000);
        assert.deepEqual(read, expected);
      } finally {
        await handle.close();
      }
    });

    it("a misconfigured column fails with exit 1 and a message naming the flag, without a stack trace", async () => {
      const args = [
        "db",
        "seed",
        "--identities",
        "1",
        "--truncate",
        "--source-admin-disabled-column",
        "admin_disabledd",
        ...target.args,
      ];
      const r = await runCli(args);
      assert.equal(r.code, 1);
      assert.match(
        r.stderr,
        /Column "admin_disabledd" not found in relation "public\.identities"; set it with --source-admin-disabled-column \(env CONTROLS_SOURCE_ADMIN_DISABLED_COLUMN\)\./,
      );
      assert.doesNotMatch(r.stderr, STACK_LINE);
      assert.equal(r.stdout, "");
      const debug = await runCli([...args, "--log-level", "debug"]);
      assert.equal(debug.code, 1);
      assert.match(debug.stderr, STACK_LINE, "--log-level debug adds the stack trace");
    });

    it("a misconfigured relation fails with exit 1 and a message naming --source-relation", async () => {
      const r = await runCli([
        "db",
        "seed",
        "--identities",
        "1",
        "--source-relation",
        "nosuchschema.identities",
        ...target.args,
      ]);
      assert.equal(r.code, 1);
      assert.match(
        r.stderr,
        /Schema "nosuchschema" .*--source-relation \(env CONTROLS_SOURCE_RELATION\)/,
      );
      assert.doesNotMatch(r.stderr, STACK_LINE);
    });
  });
}

describe("controls-migrate db connection errors", () => {
  it("an unreachable --database-url fails with exit 1, naming the flag and hiding the password", async () => {
    const r = await runCli([
      "db",
      "migrate",
      "--database-url",
      "postgres://bob:hunter2-secret@127.0.0.1:1/x",
    ]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /Cannot connect to PostgreSQL at postgres:\/\/bob:\*\*\*@127\.0\.0\.1:1\/x/,
    );
    assert.match(r.stderr, /--database-url or env DATABASE_URL/);
    assert.ok(!r.stderr.includes("hunter2-secret") && !r.stdout.includes("hunter2-secret"));
  });
});
