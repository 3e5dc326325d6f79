/**
 * Issue 51 §4: a create's answer is checked, not trusted. Through a proxy on 127.0.0.1 in front of
 * the sandbox: answers rewritten to name a DORMANT control are verified by a read and end by what
 * the platform holds (adopted, not "created" on the answer's word); answers of HTTP 201 for a
 * control that was never made are not counted as created, and the next plan agrees with the report.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { IDENTITY_PATHS } from "../../src/contract/index.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
import { runCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends } from "../helpers/db.ts";
import { type ProxiedRequest, startProxy, type TestProxy } from "../helpers/http-proxy.ts";

const N = 300;
const isCreate = (r: ProxiedRequest) =>
  r.method === "POST" && r.url.startsWith(IDENTITY_PATHS.controls);
const identityOf = (r: ProxiedRequest) =>
  (JSON.parse(r.body) as { identity_id: string }).identity_id;
const holdsClientSellOnly = (sandbox: Sandbox, id: string) =>
  sandbox
    .controlsOf(id)
    .some((c) => c.type === "SELL_ONLY" && /CLIENT/.test(c.set_by) && c.is_overridable);

for (const backend of backends) {
  describe(`a create's answer is checked on ${backend.name}`, () => {
    let out: string;
    let n = 0;
    const outArgs = () => ["--no-progress", "--json", "--out", join(out, String(++n))];
    const rigs: { rig: CliRig; proxy: TestProxy }[] = [];
    const start = async (seed: number) => {
      const rig = await startCliRig(backend, { identities: N, seed });
      const proxy = await startProxy(rig.sandbox.apiUrl);
      rigs.push({ rig, proxy });
      return { rig, proxy, env: { ...rig.env, API_BASE_URL: proxy.url } };
    };
    const missingAfter = async (rig: CliRig, env: Record<string, string>) => {
      const plan = await runCli(["plan", ...outArgs(), ...rig.target.args], env);
      assert.ok(plan.code === 0 || plan.code === 2, plan.stderr);
      return (JSON.parse(plan.stdout) as RunSummary).findings.missing_client_control ?? 0;
    };

    before(async () => {
      out = await mkdtemp(join(tmpdir(), "cm-create-answer-"));
    });
    after(async () => {
      for (const { rig, proxy } of rigs) {
        await proxy.close();
        await rig.close();
      }
      await rm(out, { recursive: true, force: true });
    });

    it("verifies creates answered as a DORMANT control by a read and adopts what the platform holds, counting none of them created", async () => {
      const { rig, proxy, env } = await start(5161);
      const rewritten: string[] = [];
      proxy.rewrite = (r, body) => {
        if (!isCreate(r) || rewritten.length >= 3) return body;
        rewritten.push(identityOf(r));
        return JSON.stringify({ ...JSON.parse(body), type: "DORMANT" });
      };
      const r = await runCli(["apply", "--yes", ...outArgs(), ...rig.target.args], env);
      const summary = JSON.parse(r.stdout) as RunSummary;
      assert.equal(rewritten.length, 3);
      assert.match(r.stderr, /was answered with a DORMANT control, not SELL_ONLY/);
      assert.equal(summary.outcomes["succeeded:adopted"], 3, JSON.stringify(summary.outcomes));
      for (const id of rewritten) assert.ok(holdsClientSellOnly(rig.sandbox, id), id);
      assert.equal(r.code, 0, r.stderr);
      proxy.rewrite = null;
      assert.equal(await missingAfter(rig, env), 0);
    });

    it("fails as unexpected_answer a create whose answered control the platform holds with another shape (not overridable), naming it", async () => {
      const { rig, proxy, env } = await start(5163);
      let made: { identity: string; id: string } | null = null;
      proxy.answerWhen = (r) => {
        if (!isCreate(r) || made) return null;
        // The platform makes a control of another shape than asked: CLIENT, not overridable.
        const identity = identityOf(r);
        const c = rig.sandbox.addControl(identity, {
          type: "SELL_ONLY",
          set_by: "CLIENT",
          is_overridable: false,
        });
        made = { identity, id: c.id };
        return { status: 200, body: JSON.stringify(c) };
      };
      const r = await runCli(["apply", "--yes", ...outArgs(), ...rig.target.args], env);
      const summary = JSON.parse(r.stdout) as RunSummary;
      assert.ok(made, "a create was answered");
      assert.equal(
        summary.outcomes["failed:unexpected_answer"],
        1,
        JSON.stringify(summary.outcomes),
      );
      assert.notEqual(r.code, 0, r.stderr);
      proxy.answerWhen = () => null;
      const plan = await runCli(["plan", ...outArgs(), ...rig.target.args], env);
      const findings = (JSON.parse(plan.stdout) as RunSummary).findings;
      assert.equal(findings.attribute_mismatch, 1, JSON.stringify(findings));
    });

    it("does not count as created the creates answered 201 for a control never made, and the next plan finds exactly those missing", async () => {
      const { rig, proxy, env } = await start(5162);
      const faked: string[] = [];
      proxy.answerWhen = (r) => {
        if (!isCreate(r) || faked.length >= 13) return null;
        faked.push(identityOf(r));
        const control = {
          id: randomUUID(),
          type: "SELL_ONLY",
          set_by: "CLIENT",
          is_overridable: true,
          reason_code: "OTHER",
          created_at: new Date().toISOString(),
        };
        return { status: 201, body: JSON.stringify(control) };
      };
      const r = await runCli(["apply", "--yes", ...outArgs(), ...rig.target.args], env);
      const summary = JSON.parse(r.stdout) as RunSummary;
      assert.equal(faked.length, 13);
      for (const id of faked) assert.equal(holdsClientSellOnly(rig.sandbox, id), false, id);
      assert.equal(
        summary.outcomes["ambiguous:unexpected_answer"],
        13,
        JSON.stringify(summary.outcomes),
      );
      const created = summary.outcomes["succeeded:created"] ?? 0;
      assert.equal(created, rig.sandbox.stats().writes.creates, "created: exactly what was made");
      assert.notEqual(r.code, 0, "a run that leaves creates in doubt does not exit 0");
      proxy.answerWhen = () => null;
      assert.equal(await missingAfter(rig, env), 13, "the next plan agrees with the report");
    });
  });
}
