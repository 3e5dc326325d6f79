/**
 * Every read command works while an apply, a plan or a revert runs (issue 29 §4). On PGlite only
 * one process may open the data folder: `runs`, `show` and `report` are answered by the running
 * process through the local channel, `status` from its status file, whether it reads or writes;
 * on PostgreSQL they read the database.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { type CliResult, collect, runCli, spawnCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends } from "../helpers/db.ts";
import { startProxy } from "../helpers/http-proxy.ts";
import { waitFor } from "../helpers/wait-for.ts";

const N = 4_000;
const SEED = 31;
const CONTROLS = "/v2/identity/controls";
const flagged = [...syntheticIdentities(N, SEED)].filter((r) => r.user_disabled).map((r) => r.id);

for (const backend of backends) {
  describe(`read commands during an apply on ${backend.name}`, { timeout: 900_000 }, () => {
    let rig: CliRig;
    let dir: string;
    let env: Record<string, string>;
    const cli = (args: string[]) => runCli([...args, ...rig.target.args], env);
    /** The plan whose report the reads write again; made before any test. */
    let planId = "";
    /** A completed apply for the third test to revert: the first test's, once it completed. */
    let completedApplyId = "";

    /** The completed apply to revert: the first test's, or one of its own when run alone. */
    async function completedApply(): Promise<string> {
      if (completedApplyId) return completedApplyId;
      const r = await cli(["apply", "--yes", "--json", "--out", join(dir, "apply-alone")]);
      assert.equal(r.code, 0, r.stderr);
      completedApplyId = JSON.parse(r.stdout).run_id as string;
      return completedApplyId;
    }

    /** `runs`, `show`, `report` of the plan and `status`, all at once; each must exit 0. */
    async function readAll(label: string, identity: string) {
      const again = join(dir, label);
      const [runs, show, report, status] = await Promise.all([
        cli(["runs", "--json"]),
        cli(["show", identity, "--json"]),
        cli(["report", planId, "--out", again]),
        cli(["status", "--json"]),
      ]);
      for (const [name, r] of Object.entries({ runs, show, report, status })) {
        assert.equal(r.code, 0, `${name} during ${label}: ${r.stderr}`);
      }
      assert.equal(JSON.parse(show.stdout).identity_id, identity);
      assert.ok(existsSync(join(again, "report.html")), "report.html written");
      const listed = runs.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { id: string; mode: string; status: string });
      return { listed, status: JSON.parse(status.stdout) as { run_id?: string; status: string } };
    }

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED, sandbox: { latencyMs: 5 } });
      dir = mkdtempSync(join(tmpdir(), "cm-reads-"));
      env = { ...rig.env, CONTROLS_PROGRESS: "false" };
      const plan = await cli(["plan", "--json", "--out", join(dir, "plan")]);
      assert.equal(plan.code, 2, plan.stderr);
      planId = JSON.parse(plan.stdout).run_id as string;
    });
    after(async () => {
      await rig.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("runs, show, report and status each exit 0 while an apply is writing, and the apply, steered faster, goes on to create every control", async () => {
      const from = Date.now();
      const apply = collect(
        spawnCli(
          ["apply", "--yes", "--rate", "4", "--out", join(dir, "apply"), ...rig.target.args],
          env,
        ),
      );
      let ended: CliResult | undefined;
      void apply.then((r) => {
        ended = r;
      });
      const writes = () => rig.sandbox.requestsIn({ from, endpoint: CONTROLS }).served;
      await waitFor("the apply's first creates", () => writes() > 0 || ended !== undefined);
      assert.equal(ended, undefined, `apply ended early: ${ended?.stderr}`);

      // All four at once, as an operator's second terminal would, while the apply writes.
      const again = join(dir, "plan-again");
      const [runs, show, report, status] = await Promise.all([
        cli(["runs", "--json"]),
        cli(["show", flagged[0] ?? "", "--json"]),
        cli(["report", planId, "--out", again]),
        cli(["status", "--json"]),
      ]);
      assert.equal(ended, undefined, "the apply was still writing during the reads");
      assert.equal(runs.code, 0, runs.stderr);
      const listed = runs.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      assert.ok(
        listed.some((r) => r.id === planId && r.status === "completed"),
        runs.stdout,
      );
      assert.ok(
        listed.some((r) => r.mode === "apply" && r.status === "running"),
        runs.stdout,
      );

      assert.equal(show.code, 0, show.stderr);
      assert.equal(JSON.parse(show.stdout).identity_id, flagged[0]);

      assert.equal(report.code, 0, report.stderr);
      for (const f of ["diff.csv", "summary.json", "summary.md", "report.html"]) {
        assert.ok(existsSync(join(again, f)), `${f} written`);
      }

      assert.equal(status.code, 0, status.stderr);
      assert.equal(JSON.parse(status.stdout).status, "running");

      // The reads are in: the rest need not crawl at 4 a second (about 100 s of creates).
      const applyId = listed.find((r) => r.mode === "apply" && r.status === "running")?.id ?? "";
      assert.ok(applyId, runs.stdout);
      const faster = await cli(["set-rate", applyId, "40"]);
      assert.equal(faster.code, 0, faster.stderr);
      const done = await apply;
      assert.equal(done.code, 0, done.stderr);
      completedApplyId = applyId;
      const created = flagged.filter((id) =>
        rig.sandbox.controlsOf(id).some((c) => !c.deleted_at && c.type === "SELL_ONLY"),
      );
      assert.equal(created.length, flagged.length);
    });

    it("runs, show, report and status each exit 0 while a run reads the platform's state, before it writes", async () => {
      const from = Date.now();
      // per-identity at 2 requests/s: a read stage of many minutes, stopped once the reads are in.
      const reading = spawnCli(
        ["plan", "--state", "per-identity", "--rate", "2", "--out", join(dir, "reading")].concat(
          rig.target.args,
        ),
        env,
      );
      const run = collect(reading);
      let ended: CliResult | undefined;
      void run.then((r) => {
        ended = r;
      });
      const reads = () => rig.sandbox.requestsIn({ from, endpoint: CONTROLS }).served;
      await waitFor("the plan's reads", () => reads() > 0 || ended !== undefined);
      assert.equal(ended, undefined, `plan ended early: ${ended?.stderr}`);

      const again = join(dir, "plan-during-read");
      const [runs, show, report, status] = await Promise.all([
        cli(["runs", "--json"]),
        cli(["show", flagged[1] ?? "", "--json"]),
        cli(["report", planId, "--out", again]),
        cli(["status", "--json"]),
      ]);
      assert.equal(ended, undefined, "the plan was still reading during the reads");
      assert.equal(runs.code, 0, runs.stderr);
      const listed = runs.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      assert.ok(
        listed.some((r) => r.mode === "plan" && r.status === "running"),
        runs.stdout,
      );
      assert.equal(show.code, 0, show.stderr);
      assert.equal(JSON.parse(show.stdout).identity_id, flagged[1]);
      assert.equal(report.code, 0, report.stderr);
      assert.ok(existsSync(join(again, "report.html")), "report.html written");
      assert.equal(status.code, 0, status.stderr);

      reading.kill("SIGINT");
      const stopped = await run;
      assert.equal(stopped.code, 130, stopped.stderr);
    });

    it("runs, show, report and status each exit 0 while a revert writes, and while a resumed revert reads what a crash left in doubt", async () => {
      // A completed apply, which `runs` during the revert lists completed.
      const applyId = await completedApply();
      // The revert talks to the platform through a proxy that can hold its requests unanswered.
      const proxy = await startProxy(rig.sandbox.apiUrl);
      const via = { ...env, API_BASE_URL: proxy.url };
      const revert = (args: string[]) =>
        spawnCli(["revert", applyId, "--yes", ...args, ...rig.target.args], via);
      try {
        // 1. While it writes: its first deletes went through, at 2 a second there are many left.
        const writing = revert(["--rate", "2", "--out", join(dir, "revert")]);
        const first = watch(collect(writing));
        const deletes = () => proxy.requests.filter((r) => r.method === "DELETE");
        await waitFor(
          "the revert's first deletes",
          () => deletes().some((r) => r.status > 0) || first.ended() !== undefined,
        );
        assert.equal(first.ended(), undefined, `revert ended early: ${first.ended()?.stderr}`);
        const during = await readAll("revert-writing", flagged[3] ?? "");
        assert.equal(first.ended(), undefined, "the revert was still writing during the reads");
        assert.ok(
          during.listed.some((r) => r.id === applyId && r.status === "completed"),
          `the apply completed: ${JSON.stringify(during.listed)}`,
        );
        const revertId = during.listed.find(
          (r) => r.mode === "revert" && r.status === "running",
        )?.id;
        assert.ok(revertId, JSON.stringify(during.listed));
        assert.equal(during.status.status, "running");

        // 2. Killed with a delete on the wire: that delete's outcome is in doubt.
        proxy.holdWhen = (r) => r.method === "DELETE";
        await waitFor("a delete held on the wire", () => proxy.held.length > 0);
        writing.kill("SIGKILL");
        assert.equal((await first.done).signal, "SIGKILL");

        // 3. The resume reads the platform for it before it writes anything: hold that read.
        const isRead = (r: { method: string; url: string }) =>
          r.method === "GET" && r.url.startsWith(CONTROLS);
        proxy.holdWhen = isRead;
        proxy.release();
        const from = proxy.requests.length;
        const resumed = watch(
          collect(revert(["--resume", revertId, "--rate", "40", "--out", join(dir, "revert-2")])),
        );
        await waitFor(
          "the resume's read of what was in doubt",
          () => proxy.held.some(isRead) || resumed.ended() !== undefined,
        );
        assert.equal(resumed.ended(), undefined, `resume ended early: ${resumed.ended()?.stderr}`);
        const reading = await readAll("revert-reading", flagged[4] ?? "");
        assert.equal(resumed.ended(), undefined, "the resumed revert was still reading");
        assert.ok(proxy.held.some(isRead), "its read was still held");
        const sent = proxy.requests.slice(from).filter((r) => r.method === "DELETE");
        assert.equal(sent.length, 0, "nothing was written while it read");
        assert.ok(
          reading.listed.some((r) => r.id === revertId && r.status === "running"),
          JSON.stringify(reading.listed),
        );

        proxy.holdWhen = () => false;
        proxy.release();
        const done = await resumed.done;
        assert.equal(done.code, 0, done.stderr);
        const left = flagged.filter((id) =>
          rig.sandbox.controlsOf(id).some((c) => !c.deleted_at && c.type === "SELL_ONLY"),
        );
        assert.deepEqual(left, [], "every control the apply created is deleted");
      } finally {
        proxy.holdWhen = () => false;
        proxy.release();
        await proxy.close();
      }
    });
  });
}

/** A child's result, and whether it has ended yet (for asserting it is still running). */
function watch(done: Promise<CliResult>) {
  let ended: CliResult | undefined;
  void done.then((r) => {
    ended = r;
  });
  return { done, ended: () => ended };
}
