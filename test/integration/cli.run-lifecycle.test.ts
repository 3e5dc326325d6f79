import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { sql } from "kysely";
import { loadSourceConfig } from "../../src/config.ts";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { WRITER_LOCK_KEY } from "../../src/db/connection/run-lock.ts";
import { TOOL_TABLES } from "../../src/db/schema.ts";
import { seedSource } from "../../src/db/source/seed.ts";
import { collect, runCli, spawnCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { waitFor } from "../helpers/wait-for.ts";

const N = 400;
const SEED = 5;
const creates = [...syntheticIdentities(N, SEED)].filter((r) => r.user_disabled).length;

for (const backend of backends) {
  describe(`a run's life through the CLI on ${backend.name}`, () => {
    let rig: CliRig;
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;
    const cli = (args: string[], extra: Record<string, string | undefined> = {}) =>
      runCli([...args, "--no-progress", ...target.args], { ...env, ...extra });

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED, sandbox: { latencyMs: 10 } });
      ({ sandbox, target, env } = rig);
    });
    after(() => rig.close());

    it("apply --plan with an unknown id says No plan run, not a foreign-key error", async () => {
      const r = await cli(["apply", "--plan", "20990101-000000-dead", "--yes"]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /No plan run "20990101-000000-dead"/);
      assert.doesNotMatch(r.stderr, /foreign key|violates/i);
    });

    it("a failure after the run started marks it failed with the error, and --json names the run", async () => {
      const r = await cli(["plan", "--json"], { OAUTH_CLIENT_SECRET: "wrong-secret" });
      assert.equal(r.code, 1);
      const { error } = JSON.parse(r.stdout);
      assert.equal(error.exit_code, 1);
      assert.match(error.message, /refused the client credentials/);
      assert.match(error.run_id, /^\d{8}-\d{6}-[0-9a-f]{4}$/);
      const h = await target.open();
      const run = await h.db
        .selectFrom(TOOL_TABLES.runs)
        .select(["status", "error"])
        .where("id", "=", error.run_id)
        .executeTakeFirstOrThrow();
      await h.close();
      assert.equal(run.status, "failed");
      assert.match(run.error ?? "", /refused the client credentials/);
      assert.ok(!JSON.stringify(run).includes("wrong-secret"), "the secret is not recorded");
    });

    it("runs lists runs under a header with an error column, and shows a silent running run as stale", async () => {
      const h = await target.open();
      // A live writer holds the writer lock (PostgreSQL). Without a holder the run is abandoned and
      // the next command that opens the database marks it interrupted, as PGlite always does: one
      // process owns its folder, so no other process can see a live PGlite writer.
      const lockHolder =
        backend.name === "postgres"
          ? await target.open().then(async (holder) => {
              const release = holder.db.connection().execute(async (conn) => {
                await sql`select pg_advisory_lock(${WRITER_LOCK_KEY})`.execute(conn);
                await new Promise<void>((r) => {
                  releaseLock = r;
                });
                await sql`select pg_advisory_unlock(${WRITER_LOCK_KEY})`.execute(conn);
              });
              return { holder, release };
            })
          : null;
      let releaseLock = () => {};
      const old = new Date(Date.now() - 5 * 60_000);
      await h.db
        .insertInto(TOOL_TABLES.runs)
        .values({
          id: "20000101-000000-0001",
          mode: "apply",
          status: "running",
          options: "{}",
          tool_version: "0",
          host: "gone",
          pid: 1,
          started_at: old,
          heartbeat_at: old,
        })
        .execute();
      await h.close();
      const r = await cli(["runs", "--limit", "50"]);
      assert.equal(r.code, 0, r.stderr);
      const [header, ...rows] = r.stdout.trimEnd().split("\n");
      assert.match(
        header ?? "",
        /^RUN\s+MODE\s+STATUS\s+EXIT\s+STARTED \(UTC\)\s+ERROR\s+FINDINGS\s+OUTCOMES$/,
      );
      const stale = rows.find((l) => l.startsWith("20000101-000000-0001"));
      if (lockHolder) {
        assert.match(stale ?? "", /stale \(process gone\?\)/);
        releaseLock();
        await lockHolder.release;
        await lockHolder.holder.close();
      } else {
        assert.match(stale ?? "", /\binterrupted\b/);
      }
      assert.ok(
        rows.some((l) => /failed .*POST \/oauth2\/token: 401/.test(l)),
        r.stdout,
      );
      // Columns align: every row's status starts where the header's STATUS does.
      const col = (header ?? "").indexOf("STATUS");
      for (const l of rows) assert.equal(l[col - 1], " ", l);
    });

    it("a resumed run reports the source counts and strategy of the run it continues", async () => {
      const child = spawnCli(
        [
          "apply",
          "--yes",
          "--no-progress",
          "--concurrency",
          "2",
          "--state",
          "bulk",
          ...target.args,
        ],
        env,
      );
      const done = collect(child);
      await waitFor("5 creates", () => sandbox.stats().writes.creates >= 5);
      child.kill("SIGKILL");
      const killed = await done;
      const runId = /Run (\S+) \(apply\) started/.exec(killed.stderr)?.[1];
      assert.ok(runId, killed.stderr);
      const r = await cli(["apply", "--resume", runId, "--yes", "--json"]);
      assert.equal(r.code, 0, r.stderr);
      const s = JSON.parse(r.stdout);
      assert.equal(s.source.rows_read, N);
      assert.ok(s.source.candidates > 0);
      assert.equal(s.strategy, "bulk");
      // What is left after apply, not the count found before it.
      assert.equal(s.findings_left.missing_client_control, 0);
      assert.match(r.stderr, /missing_client_control\s+0 left\s+(\d+ adopted, )?\d+ created\n/);
      assert.equal(sandbox.stats().writes.creates, creates);
    });

    it("discard settles in-doubt actions on the platform first, then discards the rest", async () => {
      // New work: other identities in the source and on the platform.
      const h0 = await target.open();
      await seedSource(h0.db, loadSourceConfig({}, {}), {
        identities: N,
        seed: SEED + 1,
        truncate: true,
      });
      await h0.close();
      sandbox.seedIdentities(syntheticIdentities(N, SEED + 1), { migratedFraction: 0 });
      const child = spawnCli(
        ["apply", "--yes", "--no-progress", "--concurrency", "2", ...target.args],
        env,
      );
      const done = collect(child);
      const start = sandbox.stats().writes.creates;
      await waitFor("5 more creates", () => sandbox.stats().writes.creates >= start + 5);
      // The next creates are sent and never answered: killed now, they are in doubt.
      sandbox.setFaults({ hangRate: 1 });
      const hung = sandbox.stats().faults.hang;
      await waitFor("a hung request", () => sandbox.stats().faults.hang > hung);
      child.kill("SIGKILL");
      const killed = await done;
      sandbox.setFaults({ hangRate: 0 });
      const runId = /Run (\S+) \(apply\) started/.exec(killed.stderr)?.[1];
      assert.ok(runId, killed.stderr);

      const refused = await cli(["discard", runId]);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /needs confirmation: pass --yes/);

      const h1 = await target.open();
      const inDoubt = await h1.db
        .selectFrom(TOOL_TABLES.actions)
        .select("id")
        .where("run_id", "=", runId)
        .where("status", "in", ["in_flight", "ambiguous"])
        .execute();
      await h1.close();
      assert.ok(inDoubt.length > 0, "the killed run left actions in doubt");

      const listed = () => sandbox.stats().requests["GET /v2/identity/controls"] ?? {};
      const listingsBefore = Object.values(listed()).reduce((a, b) => a + b, 0);
      const r = await cli(["discard", runId, "--yes", "--json"]);
      assert.equal(r.code, 0, r.stderr);
      const listingsAfter = Object.values(listed()).reduce((a, b) => a + b, 0);
      assert.ok(listingsAfter >= listingsBefore + inDoubt.length, "each doubt was looked up");
      const result = JSON.parse(r.stdout);
      assert.ok(result.discarded > 0);

      const h2 = await target.open();
      const run = await h2.db
        .selectFrom(TOOL_TABLES.runs)
        .select("status")
        .where("id", "=", runId)
        .executeTakeFirstOrThrow();
      const open = await h2.db
        .selectFrom(TOOL_TABLES.actions)
        .select("id")
        .where("run_id", "=", runId)
        .where("status", "in", ["pending", "in_flight", "ambiguous"])
        .execute();
      await h2.close();
      assert.equal(run.status, "discarded");
      assert.deepEqual(open, [], "no action of a discarded run is left in doubt or pending");

      const next = await cli(["apply", "--yes"]);
      assert.equal(next.code, 0, `the next apply starts cleanly: ${next.stderr}`);
      assert.equal(sandbox.stats().integrity.identitiesWithDuplicateClientSellOnly, 0);
    });
  });
}
