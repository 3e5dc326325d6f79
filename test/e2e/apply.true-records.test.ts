/**
 * Issue 26 §4 and §5: what the operator approves is what is sent, and every exit leaves a true
 * record. `--limit 3` at a terminal asks for 3 and sends 3; SIGHUP stops a run as SIGTERM does; a
 * forced second SIGINT leaves counts that the next command settles from the journal (never an
 * earlier close's); declining the revert prompt records the revert `declined`.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { sql } from "kysely";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { TOOL_TABLES } from "../../src/db/schema.ts";
import { collect, runCli, spawnCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { spawnInTty } from "../helpers/tty.ts";
import { waitFor } from "../helpers/wait-for.ts";

const N = 400;
const SEED = 26;
const flagged = [...syntheticIdentities(N, SEED)].filter((r) => r.user_disabled).length;

/**
 * Waits until the sandbox has answered `n` creates (polled: the sandbox is in this process), and
 * fails at once with the child's output if the child ends first.
 */
async function creates(
  sandbox: Sandbox,
  n: number,
  child: Promise<{ code: number | null; stderr: string }>,
): Promise<void> {
  let ended: { code: number | null; stderr: string } | null = null;
  void child.then((r) => {
    ended = r;
  });
  await waitFor(`${n} creates`, () => {
    const r = ended as { code: number | null; stderr: string } | null;
    if (r) throw new Error(`the CLI ended (exit ${r.code}) before ${n} creates: ${r.stderr}`);
    return sandbox.stats().writes.creates >= n;
  });
}

backends.forEach((backend) => {
  describe(`true records of every exit on ${backend.name}`, () => {
    let rig: CliRig;
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;
    let out: string;
    let invocations = 0;
    /** The run SIGHUP stopped: the next test resumes it. */
    let hupRun = "";
    /** Each invocation writes its report to a folder of its own under `out`. */
    const args = () => ["--no-progress", "--out", join(out, String(++invocations)), ...target.args];

    const runRow = async (runId: string) => {
      const h = await target.open();
      try {
        const run = await h.db
          .selectFrom(TOOL_TABLES.runs)
          .select(["status", "counts", "exit_code"])
          .where("id", "=", runId)
          .executeTakeFirstOrThrow();
        const journal = await sql<{ k: string; n: string }>`
          select case when outcome is null then status else status || ':' || outcome end as k,
                 count(*) as n
          from controls_migration.actions where run_id = ${runId} group by 1`.execute(h.db);
        const counts = typeof run.counts === "string" ? JSON.parse(run.counts) : run.counts;
        return {
          ...run,
          counts: counts as Record<string, number>,
          journal: Object.fromEntries(journal.rows.map((r) => [r.k, Number(r.n)])),
        };
      } finally {
        await h.close();
      }
    };
    const startedRun = (output: string) =>
      /Run (\S+) \((?:apply|revert)[^)]*\) started/.exec(output)?.[1];

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED });
      ({ sandbox, target, env } = rig);
      out = mkdtempSync(join(tmpdir(), "ledger-records-"));
    });
    after(async () => {
      await rig.close();
      rmSync(out, { recursive: true, force: true });
    });

    it(`--limit 3 at a terminal: the prompt asks for 3 of ${flagged}, says the rest stay for later, and exactly 3 are sent`, async () => {
      const t = spawnInTty(["apply", "--limit", "3", ...args()], { env });
      await t.waitFor(/Type "yes" to go ahead: /);
      assert.ok(
        t
          .output()
          .includes(
            `apply will create 3 SELL_ONLY client controls (--limit 3 of ${flagged}; the other ${flagged - 3} stay pending for a later apply) on ${sandbox.apiUrl}`,
          ),
        t.output(),
      );
      t.type("yes\r");
      const { code, output } = await t.done;
      assert.equal(code, 0, output);
      assert.equal(sandbox.stats().writes.creates, 3);
    });

    it("SIGHUP mid-apply exits 130 with the resume line and records the run interrupted, with its journal's counts", async () => {
      const before = sandbox.stats().writes.creates;
      const child = spawnCli(["apply", "--yes", "--rate", "10", ...args()], env);
      const done = collect(child);
      await creates(sandbox, before + 3, done);
      child.kill("SIGHUP");
      const r = await done;
      assert.equal(r.code, 130, r.stderr);
      const runId = startedRun(r.stderr);
      assert.ok(runId, r.stderr);
      assert.match(r.stderr, /SIGHUP received/);
      assert.match(r.stderr, new RegExp(`Resume with: controls-migrate apply --resume ${runId}`));
      const row = await runRow(runId);
      assert.equal(row.status, "interrupted");
      assert.equal(row.counts["succeeded:created"], row.journal["succeeded:created"]);
      hupRun = runId;
    });

    it("a forced second SIGINT after a resume: the next command settles the run with the journal's counts, not the first close's", async () => {
      assert.ok(hupRun, "the SIGHUP test left a run to resume");
      const first = spawnCli(
        ["apply", "--resume", hupRun, "--yes", "--rate", "10", ...args()],
        env,
      );
      const firstDone = collect(first);
      const at = sandbox.stats().writes.creates;
      await creates(sandbox, at + 3, firstDone);
      first.kill("SIGINT");
      const r1 = await firstDone;
      assert.equal(r1.code, 130, r1.stderr);
      const runId = hupRun;
      const closed = (await runRow(runId)).counts["succeeded:created"] ?? 0;

      const again = spawnCli(["apply", "--resume", runId, "--yes", "--rate", "10", ...args()], env);
      const againDone = collect(again);
      await creates(sandbox, sandbox.stats().writes.creates + 6, againDone);
      // The second SIGINT once the first is handled (two at once may arrive as one).
      const handled = new Promise<void>((resolve) => {
        let seen = "";
        again.stderr?.on("data", (d) => {
          seen += d;
          if (seen.includes("SIGINT received")) resolve();
        });
      });
      again.kill("SIGINT");
      await handled;
      again.kill("SIGINT");
      const r2 = await againDone;
      assert.equal(r2.code, 130, r2.stderr);
      assert.match(r2.stderr, /Second SIGINT: exiting now/);

      const listed = await runCli(["runs", ...target.args], env);
      assert.equal(listed.code, 0, listed.stderr);
      const row = await runRow(runId);
      assert.equal(row.status, "interrupted");
      const ofActions = Object.fromEntries(
        Object.entries(row.counts).filter(([k]) =>
          /^(pending|in_flight|succeeded|failed|ambiguous|skipped)(:|$)/.test(k),
        ),
      );
      assert.deepEqual(ofActions, row.journal, "the run's action counts are its journal's");
      assert.ok(
        (row.counts["succeeded:created"] ?? 0) > closed,
        `more than the ${closed} of the first close`,
      );
      // Resumable, and completes.
      const done = await runCli(["apply", "--resume", runId, "--yes", ...args()], env);
      assert.equal(done.code, 0, done.stderr);
    });

    it("declining the revert prompt records the revert declined, sends nothing, and a new revert is not blocked by it", async () => {
      const applied = await runCli(["runs", "--json", ...target.args], env);
      const runs = applied.stdout
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { id: string; mode: string; status: string });
      const of = runs.find((r) => r.mode === "apply" && r.status === "completed");
      assert.ok(of, applied.stdout);
      const deletesBefore = sandbox.stats().writes.deletes;
      const t = spawnInTty(["revert", of.id, ...args()], { env });
      await t.waitFor(/Type "yes" to go ahead: /);
      t.type("no\r");
      const { code, output } = await t.done;
      assert.equal(code, 1, output);
      assert.match(
        output,
        /Not confirmed: nothing was written; revert run \S+ is closed as declined/,
      );
      const revertId = startedRun(output);
      assert.ok(revertId, output);
      const row = await runRow(revertId);
      assert.equal(row.status, "declined");
      assert.equal(sandbox.stats().writes.deletes, deletesBefore, "nothing was deleted");
      const next = await runCli(["revert", of.id, "--yes", "--limit", "1", ...args()], env);
      assert.equal(next.code, 0, next.stderr);
      assert.equal(sandbox.stats().writes.deletes, deletesBefore + 1);
    });
  });
});
