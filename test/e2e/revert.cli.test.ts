/**
 * `revert RUN_ID` through the CLI against the sandbox (issue 14): it deletes exactly the controls
 * an apply created, leaves the ones it adopted, every SERVICE control and every other type, survives
 * a SIGKILL with `--resume`, and refuses a second revert and the revert of a revert.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { type CliResult, collect, runCli, spawnCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { parseCsv } from "../helpers/corpus.ts";
import { backends } from "../helpers/db.ts";
import { waitFor } from "../helpers/wait-for.ts";

const N = 4_700;
const SEED = 16;
const CONTROLS = "/v2/identity/controls";
const flagged = [...syntheticIdentities(N, SEED)].filter((r) => r.user_disabled).map((r) => r.id);
const FAST = ["--rate", "300", "--allow-rate-above-limit", "--retry-base-ms", "5"];

/** Active controls of an identity, as the sandbox holds them. */
const active = (sandbox: Sandbox, id: string) =>
  sandbox.controlsOf(id).filter((c) => !c.deleted_at);

const isClient = (setBy: string) => setBy === "CLIENT" || setBy === "SET_BY_CLIENT";

backends.forEach((backend) => {
  describe(`revert on ${backend.name}`, () => {
    let rig: CliRig;
    let dir: string;
    let env: Record<string, string>;
    let applyId: string;
    /** control id → identity, of the controls the apply created. */
    const created = new Map<string, string>();
    /** control id → identity, of the controls the apply adopted. */
    const adopted = new Map<string, string>();
    const service: string[] = [];
    const closed: string[] = [];

    const cli = (args: string[]) => runCli([...args, ...rig.target.args], env);

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED, sandbox: { latencyMs: 2 } });
      dir = mkdtempSync(join(tmpdir(), "cm-revert-"));
      env = { ...rig.env, CONTROLS_PROGRESS: "false" };
      // Controls the apply must never touch, nor its revert: SERVICE ones and another type.
      for (const id of flagged.slice(0, 30)) {
        service.push(rig.sandbox.addControl(id, { type: "SELL_ONLY", set_by: "SERVICE" }).id);
      }
      for (const id of flagged.slice(30, 40)) {
        closed.push(rig.sandbox.addControl(id, { type: "CLOSED", set_by: "CLIENT" }).id);
      }
      // Ambiguous creates are verified and adopted: the journal then holds both outcomes.
      rig.sandbox.setFaults({ ambiguousRate: 0.04 });
      const r = await cli(["apply", "--yes", "--json", ...FAST, "--out", join(dir, "apply")]);
      assert.equal(r.code, 0, r.stderr);
      rig.sandbox.setFaults({ ambiguousRate: 0 });
      applyId = JSON.parse(r.stdout).run_id;
      const h = await rig.target.open();
      try {
        const rows = await h.db
          .selectFrom("controls_migration.actions")
          .select(["identity_id", "outcome", "result_control_id"])
          .where("run_id", "=", applyId)
          .where("status", "=", "succeeded")
          .execute();
        for (const a of rows) {
          const into = a.outcome === "created" ? created : a.outcome === "adopted" ? adopted : null;
          into?.set(String(a.result_control_id), a.identity_id);
        }
      } finally {
        await h.close();
      }
      assert.ok(created.size > 400, `${created.size} created`);
      assert.ok(adopted.size > 0, `${adopted.size} adopted`);
    });
    after(async () => {
      await rig.close();
      rmSync(dir, { recursive: true, force: true });
    });

    describe("revert --dry-run", () => {
      // One dry run, whose exit, requests, stdout, stderr and report files each test reads.
      const out = () => join(dir, "dry");
      let r: CliResult;
      let sent: number;
      before(async () => {
        const from = Date.now();
        r = await cli(["revert", applyId, "--dry-run", "--json", "--out", out()]);
        sent = rig.sandbox.requestsIn({ from, endpoint: CONTROLS }).served;
      });

      it("reports what it would undo and sends nothing", () => {
        assert.equal(r.code, 0, r.stderr);
        assert.equal(sent, 0);
        const s = JSON.parse(r.stdout);
        assert.equal(s.mode, "revert");
        assert.equal(s.outcomes["skipped:dry_run"], created.size);
        assert.match(readFileSync(join(out(), "summary.md"), "utf8"), /Dry run/);
      });

      it("writes a diff.csv row per control it would delete, naming the control, the run that created it and the identity's flags, and counts them in summary.json, the terminal and report.html", () => {
        assert.equal(r.code, 0, r.stderr);
        const rows = parseCsv(readFileSync(join(out(), "diff.csv"), "utf8"));
        assert.equal(rows.length, created.size);
        const byControl = new Map(rows.map((row) => [row.observed_control_id, row]));
        assert.equal(byControl.size, created.size, "one row per control");
        for (const [control, identity] of created) {
          const row = byControl.get(control);
          assert.ok(row, `no row for control ${control}`);
          assert.equal(row.identity_id, identity);
          assert.equal(row.action, "delete");
          assert.equal(row.outcome, "would_delete");
          assert.equal(row.finding, `created_by ${applyId}`);
          assert.equal(row.user_disabled, "true", `flags of ${identity}`);
        }
        for (const control of adopted.keys()) assert.equal(byControl.has(control), false);
        const s = JSON.parse(r.stdout);
        assert.equal(s.revert.deletes, created.size);
        assert.equal(s.revert.creates, 0);
        assert.equal(s.reports.rows, created.size);
        assert.match(
          r.stderr,
          new RegExp(`would delete ${created.size} controls run ${applyId} created`),
        );
        assert.doesNotMatch(r.stderr, /no findings|rows read/);
        const html = readFileSync(join(out(), "report.html"), "utf8");
        assert.match(
          html,
          new RegExp(`id="revert-counts"[^>]*>[^<]*would delete ${created.size} controls`),
        );
      });
    });

    it("revert off a terminal without --yes is refused and sends nothing", async () => {
      const r = await cli(["revert", applyId]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /needs confirmation: pass --yes/);
    });

    it("a revert killed by SIGKILL and resumed deletes exactly the controls the apply created, and nothing else, re-reading each identity by id off the controls path; then a second revert of the same run, and the revert of a revert, are refused", async () => {
      const child = spawnCli(
        ["revert", applyId, "--yes", "--rate", "40", "--out", join(dir, "rev"), ...rig.target.args],
        env,
      );
      const done = collect(child);
      const gone = () =>
        [...created].filter(([c, id]) => !active(rig.sandbox, id).some((x) => x.id === c)).length;
      // The kill lands while deletes are hanging, not at a moment the wall clock picks: once 60
      // are gone, every further request hangs; the revert is killed with the rest undone.
      await waitFor("60 controls deleted", () => gone() >= 60);
      const hung = rig.sandbox.stats().faults.hang;
      rig.sandbox.setFaults({ hangRate: 1 });
      await waitFor("a hung request", () => rig.sandbox.stats().faults.hang > hung);
      child.kill("SIGKILL");
      await done;
      rig.sandbox.setFaults({ hangRate: 0 });
      assert.ok(created.size > 0, "the apply created controls");
      assert.ok(gone() >= 60 && gone() < created.size, `${gone()} deleted before the kill`);

      // A new revert is refused while this one is unfinished, and says how to go on.
      const again = await cli(["revert", applyId, "--yes"]);
      assert.equal(again.code, 1);
      const resumeId = /continue it with: .* --resume (\d{8}-\d{6}-[0-9a-f]{4})/.exec(
        again.stderr,
      )?.[1];
      assert.ok(resumeId, again.stderr);

      const r = await cli(["revert", applyId, "--resume", resumeId, "--yes", "--json", ...FAST]);
      assert.equal(r.code, 0, r.stderr);
      // Its report.html counts its requests as its table does, and draws no findings it never had.
      const summary = JSON.parse(r.stdout);
      const page = readFileSync(join(summary.reports.dir, "report.html"), "utf8");
      const api = Object.entries(summary.requests as Record<string, { count: number }>)
        .filter(([endpoint]) => endpoint !== "POST /oauth2/token")
        .reduce((n, [, f]) => n + f.count, 0);
      assert.ok(api > 0, r.stdout);
      assert.match(page, new RegExp(`data-requests="${api}"`));
      assert.match(page, new RegExp(`data-api-requests="${api}"`));
      assert.doesNotMatch(page, /No platform request was recorded/);
      assert.match(page, /a revert classifies no findings/);
      // Each delete's re-read asks for the identity by id, on a path with a rate budget of its
      // own: the controls path carries the deletes, and only the few reads of what the kill left
      // in doubt besides (read there, every delete took two of its requests).
      const count = (endpoint: string) =>
        (summary.requests as Record<string, { count: number }>)[endpoint]?.count ?? 0;
      const deletes = count(`DELETE ${CONTROLS}`);
      assert.ok(deletes > 0, r.stdout);
      assert.ok(count("GET /v2/identity/identities/{id}") >= deletes, r.stdout);
      assert.ok(count(`GET ${CONTROLS}`) < deletes / 10, r.stdout);

      for (const [c, id] of created) {
        assert.ok(!active(rig.sandbox, id).some((x) => x.id === c), `created ${c} is gone`);
      }
      for (const [c, id] of adopted) {
        assert.ok(
          active(rig.sandbox, id).some((x) => x.id === c),
          `adopted ${c} stays`,
        );
      }
      const all = flagged.flatMap((id) => active(rig.sandbox, id));
      for (const c of [...service, ...closed])
        assert.ok(
          all.some((x) => x.id === c),
          `${c} stays`,
        );
      const clientSellOnly = all.filter((x) => x.type === "SELL_ONLY" && isClient(x.set_by));
      assert.equal(clientSellOnly.length, adopted.size, "only the adopted client SELL_ONLY remain");

      // Once reverted, a second revert of the same run and the revert of a revert are refused.
      const second = await cli(["revert", applyId, "--yes"]);
      assert.equal(second.code, 1);
      assert.match(second.stderr, /already reverted by run (\S+)/);
      const revertId = /already reverted by run (\S+)/.exec(second.stderr)?.[1];
      const ofRevert = await cli(["revert", String(revertId), "--yes"]);
      assert.equal(ofRevert.code, 1);
      assert.match(ofRevert.stderr, /itself a revert .* reverting a revert is refused/);
    });
  });
});
