/**
 * The wait for the platform's own migration is a setting a run is bound to (issues 26 §2, 27): an
 * apply started with `--no-wait-for-platform` and interrupted goes on, when resumed without the
 * flag, sending the creates whose identity's platform legacy `user_disabled` turned true meanwhile
 * (the default, waiting, would have left them to the platform); a resume given another wait
 * (`--wait-for-platform`, `--wait-for-platform-s N`, or the env var) is refused naming the flag and
 * both values, before anything is read or sent.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { syntheticIdentities } from "../../src/contract/index.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
import { collect, runCli, spawnCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends } from "../helpers/db.ts";
import { assertExactlyOnce, clientSellOnly } from "../helpers/platform-assertions.ts";
import { waitFor } from "../helpers/wait-for.ts";

const N = 400;
const SEED = 2727;
const flagged = [...syntheticIdentities(N, SEED)].filter((r) => r.user_disabled).map((r) => r.id);

for (const backend of backends) {
  describe(`a resume bound to the run's wait for the platform on ${backend.name}`, {
    timeout: 240_000,
  }, () => {
    let rig: CliRig;
    let dir: string;
    // Only the flags say how the run waits: no CONTROLS_WAIT_FOR_PLATFORM from the test helpers.
    let env: Record<string, string | undefined>;

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED });
      env = { ...rig.env, CONTROLS_WAIT_FOR_PLATFORM: undefined };
      dir = mkdtempSync(join(tmpdir(), "cm-resume-wait-"));
      // The platform's legacy field false everywhere: every flagged identity is a create to send.
      for (const id of flagged) rig.sandbox.setLegacyFields(id, { user_disabled: false });
    });
    after(async () => {
      await rig.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("refuses a resume given another wait for the platform naming the flag and both values, and a resume without one keeps the run's --no-wait-for-platform: it sends the creates whose platform legacy field turned true meanwhile", async () => {
      const out = join(dir, "run");
      const { sandbox, target } = rig;
      const child = spawnCli(
        [
          "apply",
          "--yes",
          "--no-wait-for-platform",
          "--rate",
          "5",
          "--no-progress",
          "--out",
          out,
          ...target.args,
        ],
        env,
      );
      const ended = collect(child);
      await waitFor("the first creates", () => sandbox.stats().writes.creates >= 3);
      child.kill("SIGTERM");
      const interrupted = await ended;
      assert.equal(interrupted.code, 130, interrupted.stderr);
      const runId = /Run (\S+) \(apply\) started/.exec(interrupted.stderr)?.[1];
      assert.ok(runId, interrupted.stderr);

      // Meanwhile the platform's legacy user_disabled of every identity still waiting turns true.
      const left = flagged.filter((id) => clientSellOnly(sandbox, id).length === 0);
      assert.ok(left.length > 10, `creates left to the resume: ${left.length}`);
      for (const id of left) sandbox.setLegacyFields(id, { user_disabled: true });
      const sent = sandbox.stats().writes.creates;

      const args = ["apply", "--resume", runId, "--yes", "--no-progress", "--out", out];
      const refusals: [string[], Record<string, string | undefined>, string][] = [
        [
          ["--wait-for-platform"],
          env,
          "--wait-for-platform (--no-wait-for-platform): the run's false, this invocation's true",
        ],
        [
          [],
          { ...env, CONTROLS_WAIT_FOR_PLATFORM: "true" },
          "--wait-for-platform (--no-wait-for-platform): the run's false, this invocation's true",
        ],
        [
          ["--wait-for-platform-s", "60"],
          env,
          "--wait-for-platform-s: the run's (none), this invocation's 60",
        ],
      ];
      for (const [flags, withEnv, words] of refusals) {
        const refused = await runCli([...args, ...flags, ...target.args], withEnv);
        assert.equal(refused.code, 1, refused.stderr);
        assert.ok(refused.stderr.includes(words), refused.stderr);
        assert.match(refused.stderr, /Nothing was read or sent; the run stays resumable/);
        assert.equal(sandbox.stats().writes.creates, sent, "a refused resume sends nothing");
      }

      // No wait given: the run's own (--no-wait-for-platform); a new rate is a resume's to give.
      const resumed = await runCli([...args, "--rate", "40", "--json", ...target.args], env);
      assert.equal(resumed.code, 0, resumed.stderr);
      const summary = JSON.parse(resumed.stdout) as RunSummary;
      assert.equal(summary.run_id, runId);
      assert.equal(summary.outcomes["skipped:awaiting_platform_migration"] ?? 0, 0);
      assert.equal(sandbox.stats().writes.creates - sent, left.length);
      assertExactlyOnce(sandbox, flagged);
      const written = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as RunSummary;
      assert.equal(written.run_id, runId);
    });
  });
}
