/**
 * `controls-migrate show IDENTITY_ID`: after a plan, an apply and a reconcile, one identity's
 * history through the CLI, newest run first, page by page.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { startSandbox } from "controls-sandbox";
import { syntheticIdentities } from "../../src/contract/index.ts";
import type { IdentityInRun } from "../../src/db/report-queries/history-queries.ts";
import { type CliResult, runCli } from "../helpers/cli.ts";
import { backends, type TestTarget } from "../helpers/db.ts";

const N = 300;

interface ShowJson {
  identity_id: string;
  runs: (Omit<IdentityInRun, "started_at"> & { started_at: string })[];
  next_before: string | null;
}

for (const backend of backends) {
  describe(`controls-migrate show on ${backend.name}`, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    const out = mkdtempSync(join(tmpdir(), "cm-show-"));
    const runIds: Record<string, string> = {};
    let created: { id: string; controlId: string };
    /** `show ID --json` of the created identity: read only, so run once for the tests reading it. */
    let json: CliResult;

    before(async () => {
      sandbox = await startSandbox({ port: 0, rateLimitRps: 0, tokenRateLimitRps: 0 });
      sandbox.seedIdentities(syntheticIdentities(N, 11), { migratedFraction: 0.3, seed: 11 });
      target = await backend.target();
      const seeded = await runCli([
        "db",
        "seed",
        "--identities",
        `${N}`,
        "--seed",
        "11",
        ...target.args,
      ]);
      assert.equal(seeded.code, 0, seeded.stderr);
      const env = {
        API_BASE_URL: sandbox.apiUrl,
        OAUTH_TOKEN_URL: sandbox.tokenUrl,
        OAUTH_CLIENT_ID: sandbox.credentials.clientId,
        OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
      };
      for (const [mode, extra] of [
        ["plan", []],
        ["apply", ["--yes"]],
        ["reconcile", ["--yes"]],
      ] as const) {
        const r = await runCli(
          [mode, ...extra, "--json", "--no-progress", "--out", join(out, mode), ...target.args],
          env,
        );
        assert.ok(r.code === 0 || r.code === 2, r.stderr);
        runIds[mode] = JSON.parse(r.stdout).run_id;
      }
      // An identity the apply created a control for, and that control's id on the platform.
      const csv = readFileSync(join(out, "apply", "diff.csv"), "utf8").split("\n");
      const row = csv.find((l) => l.includes(",create,created,"))?.split(",");
      assert.ok(row?.[1]);
      const control = sandbox
        .controlsOf(row[1])
        .find((c) => c.type === "SELL_ONLY" && c.set_by === "SET_BY_CLIENT");
      assert.ok(control);
      created = { id: row[1], controlId: control.id };
      json = await runCli(["show", created.id, "--json", ...target.args]);
    });

    after(async () => {
      await sandbox.close();
      await target.drop();
      rmSync(out, { recursive: true, force: true });
    });

    it("--json gives every run newest first with the source flags, observed controls, findings and the action's attempts, HTTP status and control id", () => {
      const r = json;
      assert.equal(r.code, 0, r.stderr);
      const shown = JSON.parse(r.stdout) as ShowJson;
      assert.equal(shown.identity_id, created.id);
      assert.equal(shown.next_before, null);
      assert.deepEqual(
        shown.runs.map((x) => x.run_id),
        [runIds.reconcile, runIds.apply, runIds.plan],
      );
      const [reconcile, apply, plan] = shown.runs;
      assert.equal(plan?.source[0]?.user_disabled, true);
      assert.deepEqual(
        plan?.findings.map((f) => f.finding),
        ["missing_client_control"],
      );
      assert.deepEqual(plan?.actions, []);
      assert.equal(apply?.actions.length, 1);
      const action = apply?.actions[0];
      assert.equal(action?.action, "create");
      assert.equal(action?.status, "succeeded");
      assert.equal(action?.outcome, "created");
      assert.equal(action?.attempts, 1);
      assert.ok(action?.http_status && action.http_status >= 200 && action.http_status < 300);
      assert.equal(action?.result_control_id, created.controlId);
      assert.ok(reconcile?.controls.some((c) => c.control_id === created.controlId));
      assert.equal(reconcile?.platform?.status, "found");
      assert.ok(reconcile?.findings.some((f) => f.finding === "in_sync"));
    });

    it("pages with --limit and --before, each page continuing where the previous ended", async () => {
      const seen: string[] = [];
      let beforeId: string | null = null;
      for (let i = 0; i < 5; i++) {
        const args = ["show", created.id, "--json", "--limit", "1", ...target.args];
        if (beforeId) args.push("--before", beforeId);
        const r = await runCli(args);
        assert.equal(r.code, 0, r.stderr);
        const page = JSON.parse(r.stdout) as ShowJson;
        seen.push(...page.runs.map((x) => x.run_id));
        beforeId = page.next_before;
        if (!beforeId) break;
      }
      assert.deepEqual(seen, [runIds.reconcile, runIds.apply, runIds.plan]);
    });

    it("prints the history for people, with the action's HTTP status and control id", async () => {
      const r = await runCli(["show", created.id, "--limit", "2", ...target.args]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`^identity ${created.id}, newest run first`));
      assert.match(r.stdout, new RegExp(`run ${runIds.apply}  apply  completed`));
      assert.match(
        r.stdout,
        new RegExp(
          `action    create SELL_ONLY succeeded created HTTP 2\\d\\d 1 attempt control ${created.controlId}`,
        ),
      );
      assert.match(
        r.stdout,
        new RegExp(`Older runs: controls-migrate show ${created.id} --before ${runIds.apply}`),
      );
    });

    it("spells every owner CLIENT or SERVICE in show's text and --json and in every report of the runs, where the platform answers SET_BY_CLIENT", async () => {
      const platformSpelling = /\bSET_BY_(CLIENT|SERVICE)\b/;
      assert.ok(
        sandbox.controlsOf(created.id).some((c) => c.set_by === "SET_BY_CLIENT"),
        "the sandbox answers in the published spelling",
      );
      assert.equal(json.code, 0, json.stderr);
      const shown = JSON.parse(json.stdout) as ShowJson;
      const ours = shown.runs[0]?.controls.find((c) => c.control_id === created.controlId);
      assert.equal(ours?.set_by, "CLIENT");
      assert.doesNotMatch(json.stdout, platformSpelling);
      const text = await runCli(["show", created.id, ...target.args]);
      assert.match(text.stdout, new RegExp(`SELL_ONLY ${created.controlId} CLIENT overridable`));
      assert.doesNotMatch(text.stdout, platformSpelling);
      const runs = await runCli(["runs", ...target.args]);
      assert.equal(runs.code, 0, runs.stderr);
      assert.doesNotMatch(runs.stdout, platformSpelling);
      const files = ["summary.md", "summary.json", "diff.csv", "changes.csv", "report.html"];
      let read = 0;
      for (const mode of ["plan", "apply", "reconcile"]) {
        for (const f of files.map((name) => join(out, mode, name)).filter(existsSync)) {
          assert.doesNotMatch(readFileSync(f, "utf8"), platformSpelling, f);
          read += 1;
        }
      }
      assert.ok(read >= 13, `${read} report files read`);
      const diff = readFileSync(join(out, "apply", "diff.csv"), "utf8");
      assert.match(diff, /,CLIENT,/, "the apply's diff.csv names a CLIENT owner");
    });

    it("says plainly when no run knows the identity, and refuses an unknown --before run", async () => {
      const none = await runCli(["show", "no-such-identity", ...target.args]);
      assert.equal(none.code, 0, none.stderr);
      assert.equal(none.stdout, "No run stored anything about identity no-such-identity.\n");
      const bad = await runCli([
        "show",
        created.id,
        "--before",
        "20000101-000000-zzzz",
        ...target.args,
      ]);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /--before 20000101-000000-zzzz: no such run/);
    });
  });
}
