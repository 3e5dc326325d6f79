/**
 * Issue 51 §2: the world's delta and the source id sets belong to one platform by its key (API
 * URL, token URL and client id), not by its API URL. Three platforms share one API URL (one
 * sandbox): A, B with another client id, C with another token URL. Each one's first writing run
 * compares with no earlier run, a later run of each compares with its own previous run, never with
 * another platform's run in between, and each keeps its own id set.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { SCOPES } from "../../src/contract/index.ts";
import { TOOL_SCHEMA } from "../../src/db/schema.ts";
import { platformKey } from "../../src/migration/run/run-binding.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
import { runCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends } from "../helpers/db.ts";

const N = 200;
const SEED = 5178;
const ALL_SCOPES = Object.values(SCOPES);

for (const backend of backends) {
  describe(`platforms of one API URL keep their own previous runs and id sets, on ${backend.name}`, () => {
    let rig: CliRig;
    let out: string;
    let n = 0;
    const platforms: Record<"A" | "B" | "C", Record<string, string>> = { A: {}, B: {}, C: {} };

    before(async () => {
      rig = await startCliRig(backend, {
        identities: N,
        seed: SEED,
        sandbox: {
          clients: [
            { clientId: "client-a", clientSecret: "secret-a-0123456789", scopes: ALL_SCOPES },
            { clientId: "client-b", clientSecret: "secret-b-0123456789", scopes: ALL_SCOPES },
          ],
        },
      });
      const { sandbox } = rig;
      const base = { API_BASE_URL: sandbox.apiUrl, OAUTH_TOKEN_URL: sandbox.tokenUrl };
      const a = { OAUTH_CLIENT_ID: "client-a", OAUTH_CLIENT_SECRET: "secret-a-0123456789" };
      platforms.A = { ...base, ...a };
      platforms.B = {
        ...base,
        OAUTH_CLIENT_ID: "client-b",
        OAUTH_CLIENT_SECRET: "secret-b-0123456789",
      };
      // The same token endpoint under another URL: another platform as far as the key goes.
      platforms.C = { ...base, ...a, OAUTH_TOKEN_URL: `${sandbox.tokenUrl}?realm=c` };
      out = await mkdtemp(join(tmpdir(), "cm-world-key-"));
    });
    after(async () => {
      await rig?.close();
      await rm(out, { recursive: true, force: true });
    });

    const reconcile = async (p: keyof typeof platforms) => {
      const r = await runCli(
        [
          "reconcile",
          "--yes",
          "--json",
          "--no-progress",
          "--state",
          "bulk",
          "--out",
          join(out, String(++n)),
          ...rig.target.args,
        ],
        platforms[p],
      );
      assert.ok(r.code === 0 || r.code === 2, `${p}: ${r.stderr}`);
      const summary = JSON.parse(r.stdout) as RunSummary;
      return { id: summary.run_id, since: summary.changes?.since_run_id ?? null };
    };
    const keyOf = (p: keyof typeof platforms) =>
      platformKey({
        apiUrl: platforms[p].API_BASE_URL as string,
        tokenUrl: platforms[p].OAUTH_TOKEN_URL as string,
        clientId: platforms[p].OAUTH_CLIENT_ID as string,
      });

    it("never compares a run with another platform's previous run, nor keeps one id set for two platforms of one API URL", async () => {
      const a1 = await reconcile("A");
      assert.equal(a1.since, null, "A's first run has no previous run");
      const b1 = await reconcile("B");
      assert.equal(b1.since, null, "B (another client id): not A's run");
      const c1 = await reconcile("C");
      assert.equal(c1.since, null, "C (another token URL): not A's or B's run");
      const a2 = await reconcile("A");
      assert.equal(a2.since, a1.id, "A's second run: A's first, not B's or C's later ones");
      const b2 = await reconcile("B");
      assert.equal(b2.since, b1.id, "B's second run: B's first");

      const h = await rig.target.open();
      const sets = await sql<{ platform_key: string; run_id: string }>`
        select platform_key, run_id from ${sql.table(`${TOOL_SCHEMA}.source_id_sets`)}
        order by platform_key`.execute(h.db);
      await h.close();
      const expected = [
        { platform_key: keyOf("A"), run_id: a2.id },
        { platform_key: keyOf("B"), run_id: b2.id },
        { platform_key: keyOf("C"), run_id: c1.id },
      ].sort((x, y) => (x.platform_key < y.platform_key ? -1 : 1));
      assert.deepEqual(sets.rows, expected, "one id set per platform, each its own last run's");
    });
  });
}
