/**
 * Issue 51 §3: every send re-checks both sides. An apply is killed (SIGKILL) with creates in flight
 * (held unanswered by a proxy in front of the sandbox, so none reached it); the source then clears
 * `user_disabled` for exactly those identities; the resume verifies them on the platform (absent,
 * back to pending) and, although that reset is newer than the resume's start, re-reads their
 * source rows too: none of them is restricted, each ends `skipped:source_changed`.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { IDENTITY_PATHS } from "../../src/contract/index.ts";
import type { DatabaseHandle } from "../../src/db/connection/connect.ts";
import { collect, runCli, spawnCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { startProxy, type TestProxy } from "../helpers/http-proxy.ts";

const N = 300;
const SEED = 5103;
const IN_FLIGHT = 4;

async function waitFor(cond: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function onDatabase<T>(
  target: TestTarget,
  work: (db: DatabaseHandle["db"]) => Promise<T>,
): Promise<T> {
  const h = await target.open();
  try {
    return await work(h.db);
  } finally {
    await h.close();
  }
}

for (const backend of backends) {
  describe(`a resume re-reads the source of creates that were in flight on ${backend.name}`, () => {
    let rig: CliRig;
    let proxy: TestProxy;
    let out: string;

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED });
      proxy = await startProxy(rig.sandbox.apiUrl);
      out = await mkdtemp(join(tmpdir(), "cm-in-flight-"));
    });
    after(async () => {
      await proxy.close();
      await rig.close();
      await rm(out, { recursive: true, force: true });
    });

    it("sends none of the creates that were in flight at a SIGKILL once their flags were cleared: 0 restricted, each skipped:source_changed", async () => {
      const { sandbox, target } = rig;
      const env = { ...rig.env, API_BASE_URL: proxy.url };
      const base = ["--yes", "--no-progress", "--concurrency", String(IN_FLIGHT), ...target.args];
      const isCreate = (r: { method: string; url: string }) =>
        r.method === "POST" && r.url.startsWith(IDENTITY_PATHS.controls);
      proxy.holdWhen = isCreate;
      const child = spawnCli(["apply", "--out", join(out, "a"), ...base], env);
      const done = collect(child);
      await waitFor(() => proxy.held.length >= IN_FLIGHT, 120_000);
      child.kill("SIGKILL");
      const killed = await done;
      assert.equal(killed.signal, "SIGKILL", killed.stderr);
      const runId = /Run (\S+) \(apply\) started/.exec(killed.stderr)?.[1];
      assert.ok(runId, killed.stderr);
      const inFlight = proxy.held.map(
        (r) => (JSON.parse(r.body) as { identity_id: string }).identity_id,
      );
      proxy.holdWhen = () => false;
      proxy.release(); // the killed client's requests are dropped, never forwarded
      assert.equal(inFlight.length, IN_FLIGHT);
      assert.equal(sandbox.stats().writes.creates, 0, "no create reached the platform");

      const journaled = await onDatabase(target, async (db) => {
        const r = await sql<{ status: string }>`
          select status from controls_migration.actions
          where run_id = ${runId} and identity_id in (${sql.join(inFlight)})`.execute(db);
        await sql`update identities set user_disabled = false
          where id::text in (${sql.join(inFlight)})`.execute(db);
        return r.rows.map((x) => x.status);
      });
      assert.deepEqual(journaled, Array(IN_FLIGHT).fill("in_flight"));

      const resumed = await runCli(
        ["apply", "--resume", runId, "--out", join(out, "b"), ...base],
        env,
      );
      assert.equal(resumed.code, 0, resumed.stderr);
      for (const id of inFlight) {
        const held = sandbox.controlsOf(id).filter((c) => c.type === "SELL_ONLY");
        assert.deepEqual(held, [], `${id}: its flag was cleared, it must not be restricted`);
      }
      const outcomes = await onDatabase(target, async (db) => {
        const r = await sql<{ o: string }>`
          select status || ':' || coalesce(outcome, '') as o from controls_migration.actions
          where run_id = ${runId} and identity_id in (${sql.join(inFlight)})`.execute(db);
        return r.rows.map((x) => x.o);
      });
      assert.deepEqual(outcomes, Array(IN_FLIGHT).fill("skipped:source_changed"));
      assert.ok(sandbox.stats().writes.creates > 0, "the other creates were sent");
    });
  });
}
