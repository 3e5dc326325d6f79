/**
 * Re-read the source before a send (issue 26, step 3): an apply is killed with SIGKILL while its
 * creates are under way, then `user_disabled` is cleared in the source for 100 identities whose
 * creates are still pending, then `apply --resume` runs. None of the 100 is restricted; each of
 * their creates ends `skipped:source_changed`; the next plan does not call them
 * `unexpected_client_control`.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { sql } from "kysely";
import type { RunSummary } from "../../src/reports/summary.ts";
import { collect, runCli, spawnCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { assertNoneRestricted } from "../helpers/platform-assertions.ts";
import { waitFor } from "../helpers/wait-for.ts";

const N = 2000;
const SEED = 23;
const CLEARED = 100;

/** Clears user_disabled in the source for 100 identities whose creates are still pending. */
async function clearPendingFlags(target: TestTarget, runId: string): Promise<string[]> {
  const h = await target.open();
  try {
    const pending = await sql<{ identity_id: string }>`
      select identity_id from controls_migration.actions
      where run_id = ${runId} and action = 'create' and status = 'pending'
      order by id desc limit ${CLEARED}`.execute(h.db);
    const ids = pending.rows.map((r) => r.identity_id);
    await sql`update identities set user_disabled = false
      where id::text in (${sql.join(ids)})`.execute(h.db);
    return ids;
  } finally {
    await h.close();
  }
}

async function actionOutcomes(target: TestTarget, runId: string, ids: readonly string[]) {
  const h = await target.open();
  try {
    const r = await sql<{ status: string; outcome: string | null }>`
      select status, outcome from controls_migration.actions
      where run_id = ${runId} and identity_id in (${sql.join(ids)})`.execute(h.db);
    return r.rows.map((x) => `${x.status}:${x.outcome}`);
  } finally {
    await h.close();
  }
}

async function findingsOf(target: TestTarget, runId: string, ids: readonly string[]) {
  const h = await target.open();
  try {
    const r = await sql<{ finding: string }>`
      select finding from controls_migration.findings
      where run_id = ${runId} and identity_id in (${sql.join(ids)})`.execute(h.db);
    return r.rows.map((x) => x.finding);
  } finally {
    await h.close();
  }
}

for (const backend of backends) {
  describe(`apply --resume re-reads the source's flags on ${backend.name}`, {
    timeout: 300_000,
  }, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;
    let rig: CliRig;
    let out: string;

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED });
      ({ sandbox, target, env } = rig);
      out = await mkdtemp(join(tmpdir(), "cm-source-reread-"));
    });
    after(async () => {
      await rig.close();
      await rm(out, { recursive: true, force: true });
    });

    it("100 pending creates whose user_disabled was cleared after a SIGKILL are not sent on resume, end skipped:source_changed, and the next plan finds no unexpected_client_control for them", async () => {
      const base = ["--yes", "--no-progress", "--concurrency", "2", ...target.args];
      // 1. An apply, killed with SIGKILL once 20 creates reached the sandbox.
      const child = spawnCli(["apply", "--rate", "10", "--out", join(out, "a"), ...base], env);
      const done = collect(child);
      await waitFor("20 creates", () => sandbox.stats().writes.creates >= 20);
      child.kill("SIGKILL");
      const killed = await done;
      assert.equal(killed.signal, "SIGKILL", killed.stderr);
      const runId = /Run (\S+) \(apply\) started/.exec(killed.stderr)?.[1];
      assert.ok(runId, killed.stderr);

      // 2. The source clears user_disabled on 100 identities whose creates are still pending.
      const cleared = await clearPendingFlags(target, runId);
      assert.equal(cleared.length, CLEARED);
      assertNoneRestricted(sandbox, cleared);

      // 3. The resume re-reads the source before sending anything.
      const resumed = await runCli(
        ["apply", "--resume", runId, "--json", "--rate", "40", "--out", join(out, "b"), ...base],
        env,
      );
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.match(resumed.stderr, /100 cancelled as skipped:source_changed/);
      const summary = JSON.parse(resumed.stdout) as RunSummary;
      assert.equal(summary.outcomes["skipped:source_changed"], CLEARED);
      assert.ok(
        summary.control_events?.some(
          (e) =>
            e.event === "source_reread" && /100 pending creates cancelled/.test(e.detail ?? ""),
        ),
        JSON.stringify(summary.control_events),
      );
      assertNoneRestricted(sandbox, cleared);
      const outcomes = await actionOutcomes(target, runId, cleared);
      assert.equal(outcomes.length, CLEARED);
      assert.ok(
        outcomes.every((o) => o === "skipped:source_changed"),
        outcomes.join(","),
      );

      // 4. The next plan does not call them unexpected_client_control.
      const plan = await runCli(
        ["plan", "--no-progress", "--out", join(out, "c"), ...target.args],
        env,
      );
      assert.ok(plan.code === 0 || plan.code === 2, plan.stderr);
      const planId = /Run (\S+) \(plan\) started/.exec(plan.stderr)?.[1];
      assert.ok(planId, plan.stderr);
      const findings = await findingsOf(target, planId, cleared);
      assert.ok(findings.length > 0, "the plan classified the cleared identities");
      assert.ok(!findings.includes("unexpected_client_control"), findings.join(","));
      assert.ok(!findings.includes("missing_client_control"), findings.join(","));
    });
  });
}
