/**
 * Issue 51 §6: Ctrl-C lets the requests in flight finish, as the README says. An apply whose
 * creates are on the wire (held by a proxy on 127.0.0.1) is sent SIGINT; the platform then answers
 * them: each is recorded with that answer (`succeeded:created`), none left `ambiguous`.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { IDENTITY_PATHS } from "../../src/contract/index.ts";
import { collect, spawnCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends } from "../helpers/db.ts";
import { startProxy, type TestProxy } from "../helpers/http-proxy.ts";

const IN_FLIGHT = 2;

async function waitFor(cond: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
}

for (const backend of backends) {
  describe(`an interrupted apply records the answers in flight on ${backend.name}`, () => {
    let rig: CliRig;
    let proxy: TestProxy;
    let out: string;

    before(async () => {
      rig = await startCliRig(backend, { identities: 300, seed: 5165 });
      proxy = await startProxy(rig.sandbox.apiUrl);
      out = await mkdtemp(join(tmpdir(), "cm-sigint-"));
    });
    after(async () => {
      await proxy.close();
      await rig.close();
      await rm(out, { recursive: true, force: true });
    });

    it("records a create answered after SIGINT with its answer, succeeded:created, not ambiguous", async () => {
      const { sandbox, target } = rig;
      const env = { ...rig.env, API_BASE_URL: proxy.url };
      proxy.holdWhen = (r) => r.method === "POST" && r.url.startsWith(IDENTITY_PATHS.controls);
      const child = spawnCli(
        [
          "apply",
          "--yes",
          "--no-progress",
          "--concurrency",
          String(IN_FLIGHT),
          "--out",
          out,
          ...target.args,
        ],
        env,
      );
      let stderr = "";
      child.stderr?.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      const done = collect(child);
      await waitFor(() => proxy.held.length >= IN_FLIGHT, 120_000);
      const onWire = proxy.held.map(
        (r) => (JSON.parse(r.body) as { identity_id: string }).identity_id,
      );
      child.kill("SIGINT");
      await waitFor(() => /SIGINT received/.test(stderr), 60_000);
      proxy.holdWhen = () => false;
      proxy.release(); // the platform answers them now, after the interrupt
      const stopped = await done;
      assert.equal(stopped.code, 130, stopped.stderr);
      const runId = /Run (\S+) \(apply\) started/.exec(stopped.stderr)?.[1];
      assert.ok(runId, stopped.stderr);

      const h = await target.open();
      try {
        const r = await sql<{ o: string }>`
          select status || ':' || coalesce(outcome, '') as o from controls_migration.actions
          where run_id = ${runId} and identity_id in (${sql.join(onWire)})`.execute(h.db);
        assert.deepEqual(
          r.rows.map((x) => x.o),
          Array(IN_FLIGHT).fill("succeeded:created"),
        );
        const doubt = await sql<{ n: number }>`
          select count(*)::int as n from controls_migration.actions
          where run_id = ${runId} and status in ('ambiguous', 'in_flight')`.execute(h.db);
        assert.equal(doubt.rows[0]?.n, 0);
      } finally {
        await h.close();
      }
      for (const id of onWire) {
        assert.ok(
          sandbox.controlsOf(id).some((c) => c.type === "SELL_ONLY"),
          id,
        );
      }
    });
  });
}
