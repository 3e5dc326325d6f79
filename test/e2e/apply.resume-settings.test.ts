/**
 * Issue 26 §2: a run is bound to the settings it started with. A `--rate 5` apply killed with
 * SIGKILL and resumed without `--rate` keeps its 5 requests/s, measured at the sandbox; the printed
 * `Resume with:` line works when pasted into a shell off a terminal; a resume that gives another
 * rate says so in the log and in summary.json; another reason is refused naming both.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { after, before, describe, it } from "node:test";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { CAP_GUARD_MS } from "../../src/platform/index.ts";
import { type CliResult, collect, REHEARSAL_ENV, runCli, spawnCli } from "../helpers/cli.ts";
import { CLI_ENTRY } from "../helpers/cli-entry.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends } from "../helpers/db.ts";
import { scratchCwd } from "../helpers/scratch-cwd.ts";
import { waitFor } from "../helpers/wait-for.ts";

const N = 400;
const SEED = 2627;
const CONTROLS = "/v2/identity/controls";
/**
 * The sandbox stamps a request when its process handles it. The CLI's one-second cap counts a
 * second plus CAP_GUARD_MS from each real send, so loopback jitter cannot put a sixth request in a
 * second as the sandbox counts. Only a stall of the sandbox's own process (this one) longer than
 * that guard could: measured here, its worth is the one allowance (0 on a quiet machine). Without
 * the restored rate the resume would go at the default 40 requests/s.
 */
const jitterAllowance = (stallMs: number) => {
  const excess = stallMs - STALL_RESOLUTION_MS;
  return excess > CAP_GUARD_MS ? Math.ceil((excess * 5) / 1000) : 0;
};
const STALL_RESOLUTION_MS = 10;

const flagged = [...syntheticIdentities(N, SEED)].filter((r) => r.user_disabled).map((r) => r.id);

/** The most requests to the controls path in any one-second window [t, t + 999] of [from, to]. */
function busiestSecond(rig: CliRig, from: number, to: number): number {
  let most = 0;
  for (let t = from - 999; t <= to; t += 5) {
    const n = rig.sandbox.requestsIn({ from: t, to: t + 999, endpoint: CONTROLS }).served;
    most = Math.max(most, n);
  }
  return most;
}

/** Runs a pasted `Resume with:` command in bash, `controls-migrate` being this checkout's CLI. */
function pasteInShell(line: string, env: Record<string, string>): Promise<CliResult> {
  const cli = [process.execPath, ...CLI_ENTRY].map((w) => `'${w}'`).join(" ");
  const script = `controls-migrate() { ${cli} "$@"; }\n${line}\n`;
  const child = spawn("bash", ["-c", script], {
    cwd: scratchCwd(),
    env: { ...process.env, CONTROLS_LOG_LEVEL: undefined, ...REHEARSAL_ENV, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return collect(child);
}

/** Starts a `--rate 5` apply, SIGKILLs it after its first creates; returns the run's id. */
async function killedRun(rig: CliRig, out: string): Promise<string> {
  const child = spawnCli(
    ["apply", "--yes", "--rate", "5", "--no-progress", "--out", out, ...rig.target.args],
    rig.env,
  );
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  const closed = new Promise((r) => child.on("close", r));
  await waitFor("the first creates", () => rig.sandbox.stats().writes.creates >= 3);
  child.kill("SIGKILL");
  await closed;
  const runId = /Run (\S+) \(apply\) started/.exec(stderr)?.[1];
  assert.ok(runId, stderr);
  return runId;
}

backends.forEach((backend) => {
  describe(`a resume bound to its settings on ${backend.name}`, () => {
    let rig: CliRig;
    let dir: string;

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED });
      dir = mkdtempSync(join(tmpdir(), "resume-settings-"));
    });
    after(async () => {
      await rig.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("a --rate 5 apply killed with SIGKILL and resumed without --rate, then interrupted and resumed by pasting its Resume with: line, never sends more than 5 requests to the controls path in any one-second window and leaves every flagged identity its control", async (t) => {
      const out = join(dir, "rate");
      const runId = await killedRun(rig, out);
      const from = Date.now();
      const stalls = monitorEventLoopDelay({ resolution: STALL_RESOLUTION_MS });
      stalls.enable();
      const resumed = spawnCli(
        ["apply", "--resume", runId, "--no-progress", "--yes", "--out", out, ...rig.target.args],
        rig.env,
      );
      const stopped = collect(resumed);
      const before = rig.sandbox.stats().writes.creates;
      await waitFor(
        "creates of the resume",
        () => rig.sandbox.stats().writes.creates >= before + 8,
      );
      resumed.kill("SIGTERM");
      const interrupted = await stopped;
      assert.equal(interrupted.code, 130, interrupted.stderr);
      const line = /^Resume with: (.+)$/m.exec(interrupted.stderr)?.[1];
      assert.ok(line, interrupted.stderr);
      assert.ok(line.startsWith(`controls-migrate apply --resume ${runId} `), line);
      for (const flag of [...rig.target.args, "--out", "--yes"]) {
        assert.ok(line.includes(flag), `${flag} in: ${line}`);
      }
      assert.doesNotMatch(line, /--rate/, "the rate is restored, not repeated");
      assert.ok(!line.includes(rig.env.OAUTH_CLIENT_SECRET!), "no secret in the line");

      const pasted = await pasteInShell(line, rig.env);
      const to = Date.now();
      stalls.disable();
      const stallMs = stalls.max / 1e6;
      assert.equal(pasted.code, 0, pasted.stderr);
      const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8"));
      assert.equal(summary.run_id, runId);
      assert.equal(summary.settings_changed_at_resume, undefined, "no setting was changed");

      const most = busiestSecond(rig, from, to);
      const allowed = 5 + jitterAllowance(stallMs);
      t.diagnostic(
        `busiest second at the sandbox: ${most} requests; longest stall: ${Math.round(stallMs)} ms`,
      );
      assert.ok(most > 0, "the resumes sent creates");
      assert.ok(
        most <= allowed,
        `at most ${allowed} requests in any second (5, and ${allowed - 5} for a ${Math.round(stallMs)} ms stall of the sandbox's process), measured ${most}`,
      );
      assert.ok(flagged.length > 0);
      const missing = flagged.filter(
        (id) => !rig.sandbox.controlsOf(id).some((c) => c.type === "SELL_ONLY"),
      );
      assert.deepEqual(missing, [], "every flagged identity holds its SELL_ONLY");
      assert.equal(rig.sandbox.stats().integrity.identitiesWithDuplicateClientSellOnly, 0);
    });
  });
});

backends.forEach((backend) => {
  describe(`a resume that changes a setting on ${backend.name}`, () => {
    let rig: CliRig;
    let dir: string;

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED + 1 });
      dir = mkdtempSync(join(tmpdir(), "resume-settings-"));
    });
    after(async () => {
      await rig.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("refuses a resume given another --reason naming both reasons, then resumes with --rate 20 and says so in the log and in summary.json's settings_changed_at_resume", async () => {
      const out = join(dir, "changed");
      const runId = await killedRun(rig, out);
      const args = ["apply", "--resume", runId, "--yes", "--no-progress", "--out", out];
      const sent = rig.sandbox.stats().writes.creates;

      const refused = await runCli(
        [...args, "--reason", "other words", ...rig.target.args],
        rig.env,
      );
      assert.equal(refused.code, 1, refused.stderr);
      assert.ok(
        refused.stderr.includes(
          `--reason: the run's "controls-migrate: migrated from legacy user_disabled", this invocation's "other words"`,
        ),
        refused.stderr,
      );
      assert.match(refused.stderr, /the run stays resumable/);
      assert.equal(rig.sandbox.stats().writes.creates, sent, "the refused resume sent nothing");

      const resumed = await runCli([...args, "--rate", "20", ...rig.target.args], rig.env);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.ok(
        resumed.stderr.includes(
          `Run ${runId} resumes with --rate 20 requests/s (it ran with 5), as set-rate would change it.`,
        ),
        resumed.stderr,
      );
      const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8"));
      assert.deepEqual(summary.settings_changed_at_resume, [
        { setting: "rate", flag: "--rate", was: 5, now: 20 },
      ]);
    });
  });
});
