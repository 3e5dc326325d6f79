import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { startSandbox } from "controls-sandbox";
import { runCli } from "../helpers/cli.ts";
import {
  craftPlatform,
  EXPECTED_FINDINGS,
  ids,
  seedCraftedSource,
} from "../helpers/crafted-dataset.ts";
import { backends, type TestTarget } from "../helpers/db.ts";

const writes = (s: Sandbox) => {
  const w = s.stats().writes;
  return w.creates + w.deletes;
};

for (const backend of backends) {
  describe(`plan, apply and reconcile through the CLI on ${backend.name}`, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;
    const out = mkdtempSync(join(tmpdir(), "cm-e2e-"));
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

    it("plan reports every finding category with the expected counts and makes zero write calls", async () => {
      const r = await cli(["plan", "--state", "bulk", "--json", "--out", join(out, "plan")]);
      assert.equal(r.code, 2, r.stderr);
      const summary = JSON.parse(r.stdout);
      assert.deepEqual(summary.findings, EXPECTED_FINDINGS);
      assert.equal(writes(sandbox), 0);
      const csv = readFileSync(join(out, "plan", "diff.csv"), "utf8");
      assert.match(
        csv,
        new RegExp(`${ids.M},true,false,true,false,missing_client_control,.*FROZEN:SERVICE`),
      );
    });

    it("apply refuses without --yes when there is no terminal, and writes nothing", async () => {
      const r = await cli(["apply"]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /--yes/);
      assert.equal(writes(sandbox), 0);
    });

    it("apply creates exactly the missing client controls, never a FROZEN one", async () => {
      const r = await cli(["apply", "--yes", "--json", "--out", join(out, "apply")]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).outcomes["succeeded:created"], 4);
      const clientSellOnly = (k: string) =>
        sandbox
          .controlsOf(ids[k]!)
          .filter((c) => c.type === "SELL_ONLY" && c.set_by === "SET_BY_CLIENT");
      for (const k of ["A", "M", "N", "R"]) {
        assert.equal(clientSellOnly(k).length, 1, `identity ${k}`);
      }
      const r2 = sandbox.controlsOf(ids.R!).filter((c) => c.type === "SELL_ONLY");
      assert.equal(r2.length, 2, "R keeps the platform's SERVICE control next to the new one");
      assert.equal(sandbox.stats().writes.creates, 4);
      const frozen = sandbox.controlsOf(ids.M!).filter((c) => c.type === "FROZEN");
      assert.equal(frozen.length, 1);
    });

    it("a reconcile right after apply makes zero write calls and states what changed", async () => {
      const before = writes(sandbox);
      const r = await cli([
        "reconcile",
        "--yes",
        "--exit-on",
        "any",
        "--json",
        "--out",
        join(out, "rec1"),
      ]);
      assert.equal(r.code, 2, r.stderr); // report-only findings remain
      const s = JSON.parse(r.stdout);
      assert.equal(writes(sandbox), before);
      assert.equal(s.findings.missing_client_control, 0);
      assert.ok(s.changes);
    });

    it("reconcile --prune deletes only overridable client SELL_ONLY controls and never the last SELL_ONLY of a flagged identity", async () => {
      const r = await cli([
        "reconcile",
        "--yes",
        "--prune",
        "--exit-on",
        "any",
        "--json",
        "--out",
        join(out, "rec2"),
      ]);
      assert.equal(r.code, 2, r.stderr);
      const active = (k: string) =>
        sandbox.controlsOf(ids[k]!).filter((c) => c.type === "SELL_ONLY");
      assert.equal(active("E").length, 0, "unexpected overridable client control is pruned");
      assert.equal(active("O").length, 1, "the duplicate is pruned, the original kept");
      assert.equal(active("Q").length, 1, "non-overridable client control is kept");
      assert.equal(active("F").length, 1, "service control is kept");
      assert.equal(active("D").length, 1, "service control is kept");
      assert.equal(
        active("S").length,
        1,
        "the only SELL_ONLY of an admin_disabled identity is kept",
      );
      assert.equal(active("T").length, 1, "beside the SERVICE control, the client one is pruned");
      assert.match(active("T")[0]?.set_by ?? "", /SERVICE$/);
      assert.equal(sandbox.stats().writes.deletes, 3);
    });
  });
}
