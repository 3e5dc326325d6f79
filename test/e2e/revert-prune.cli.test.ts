/**
 * `revert` of a `reconcile --prune` through the CLI (issue 14): the controls the reconcile pruned
 * are created again as CLIENT SELL_ONLY with reason `revert of <run-id>`, each with a new id that
 * the report lists; the controls it created are deleted.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { startSandbox } from "controls-sandbox";
import { runCli } from "../helpers/cli.ts";
import { craftPlatform, ids, seedCraftedSource } from "../helpers/crafted-dataset.ts";
import { backends, type TestTarget } from "../helpers/db.ts";

for (const backend of backends) {
  describe(`revert of a reconcile --prune on ${backend.name}`, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;
    const out = mkdtempSync(join(tmpdir(), "cm-revert-prune-"));
    const cli = (args: string[]) => runCli([...args, ...target.args, "--no-progress"], env);

    before(async () => {
      sandbox = await startSandbox({ port: 0, rateLimitRps: 0, tokenRateLimitRps: 0 });
      craftPlatform(sandbox);
      target = await backend.target();
      const h = await target.open({ migrate: false });
      await seedCraftedSource(h.db);
      await h.close();
      env = {
        API_BASE_URL: sandbox.apiUrl,
        OAUTH_TOKEN_URL: sandbox.tokenUrl,
        OAUTH_CLIENT_ID: sandbox.credentials.clientId,
        OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
      };
    });
    after(async () => {
      await sandbox.close();
      await target.drop();
      rmSync(out, { recursive: true, force: true });
    });

    it("the pruned controls come back as new CLIENT SELL_ONLY controls and the created ones go, also after a --limit canary and --resume", async () => {
      const rec = await cli(["reconcile", "--yes", "--prune", "--json", "--out", join(out, "rec")]);
      assert.ok([0, 2].includes(rec.code ?? -1), rec.stderr);
      const recId = JSON.parse(rec.stdout).run_id as string;
      const deleted = sandbox.stats().writes.deletes;
      assert.equal(deleted, 3);
      const sellOnly = (k: string) =>
        sandbox.controlsOf(ids[k]!).filter((c) => c.type === "SELL_ONLY" && !c.deleted_at);
      const before = { E: sellOnly("E").length, O: sellOnly("O").length, T: sellOnly("T").length };

      // A canary first: --limit 1 reverts one write; a new revert is refused and names the resume.
      // With its progress on (off a terminal: a line at the end), as an operator runs it.
      const canaryOut = join(out, "canary");
      const canary = await runCli(
        ["revert", recId, "--yes", "--limit", "1", "--json", "--out", canaryOut, ...target.args],
        env,
      );
      assert.equal(canary.code, 0, canary.stderr);
      const c = JSON.parse(canary.stdout);
      assert.ok(c.outcomes["skipped:not_run_limit"] > 0, JSON.stringify(c.outcomes));
      // Its progress says revert, its report's open line is printed, and only `revert --resume`
      // is named for the rest (no later apply picks it up).
      assert.match(canary.stderr, /revert: 1\/1 \(100\.0%\)/);
      assert.doesNotMatch(canary.stderr, /\bapply: \d/);
      assert.ok(canary.stderr.includes(`open: ${join(canaryOut, "report.html")}`), canary.stderr);
      assert.ok(
        canary.stderr.includes(
          `Resume with: controls-migrate revert ${recId} --resume ${c.run_id} --yes`,
        ),
        canary.stderr,
      );
      assert.doesNotMatch(canary.stderr, /later apply/);
      const again = await cli(["revert", recId, "--yes"]);
      assert.equal(again.code, 1);
      assert.match(
        again.stderr,
        /left by --limit\); continue it with: controls-migrate revert \S+ --resume (\S+)/,
      );
      assert.ok(again.stderr.includes(`--resume ${c.run_id}`), again.stderr);

      const r = await cli([
        "revert",
        recId,
        "--resume",
        c.run_id,
        "--yes",
        "--json",
        "--out",
        join(out, "rev"),
      ]);
      assert.equal(r.code, 0, r.stderr);
      const s = JSON.parse(r.stdout);
      assert.equal(s.revert.of_run_id, recId);
      assert.equal(s.revert.recreated.length, 3);
      for (const c of s.revert.recreated) assert.notEqual(c.new_control_id, c.deleted_control_id);
      assert.equal(sellOnly("E").length, before.E + 1);
      assert.equal(sellOnly("O").length, before.O + 1);
      assert.equal(sellOnly("T").length, before.T + 1);
      const back = sellOnly("E").find((c) => c.reason === `revert of ${recId}`);
      assert.ok(back, "re-created with the reason naming the reverted run");
      assert.match(back.set_by, /CLIENT$/);
      const md = readFileSync(join(out, "rev", "summary.md"), "utf8");
      assert.match(md, /3 pruned controls were created again; each is a new control with a new id/);
      // Every control the reconcile created is gone again.
      assert.equal(s.outcomes["succeeded:deleted"] ?? 0, sandbox.stats().writes.creates - 3);
    });
  });
}
