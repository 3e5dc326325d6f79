/**
 * Operating a long run (issue 14) through the CLI: while an apply of about 1,100 creates runs
 * against the sandbox (20 ms latency), a second process reads `status --json`, pauses and continues
 * it, changes its rate, and a throttle file holds it; the sandbox's request log shows each effect,
 * and the run ends with every control exactly once and the changes listed in summary.md.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { localChannelPaths } from "../../src/migration/steer/local-channel.ts";
import { type CliResult, collect, runCli, spawnCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends } from "../helpers/db.ts";
import { assertExactlyOnce } from "../helpers/platform-assertions.ts";
import { waitFor } from "../helpers/wait-for.ts";

const N = 12_000;
const SEED = 14;
const RATE = 40;
const CONTROLS = "/v2/identity/controls";
const expected = [...syntheticIdentities(N, SEED)].filter((r) => r.user_disabled).map((r) => r.id);

/** Writes to the controls path that reached the sandbox in [from, to]. */
const writesIn = (sandbox: Sandbox, from: number, to?: number) =>
  sandbox.requestsIn({ from, ...(to === undefined ? {} : { to }), endpoint: CONTROLS }).served;

backends.forEach((backend) => {
  describe(`steering a running apply on ${backend.name}`, () => {
    let rig: CliRig;
    let dir: string;
    let env: Record<string, string>;
    let db: readonly string[];
    /**
     * PGlite: the status file the run rewrites each second, which `status` reads (PostgreSQL:
     * none, `status` reads the database). Reading it again before the run rewrote it tells nothing
     * new, and costs a child process.
     */
    let statusFile: string | undefined;
    /** The status file's mtime when `status` was last started. */
    let readAt = -1;
    const written = (file: string) => statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? -1;

    before(async () => {
      rig = await startCliRig(backend, {
        identities: N,
        seed: SEED,
        sandbox: { latencyMs: 20, rateLimitRps: 0 },
      });
      dir = mkdtempSync(join(tmpdir(), "cm-steer-"));
      env = { ...rig.env, CONTROLS_PROGRESS: "false" };
      db = rig.target.args;
      statusFile = backend.name === "pglite" ? localChannelPaths(db[1]!).statusFile : undefined;
    });
    after(async () => {
      await rig.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const cli = async (args: string[]): Promise<CliResult> => {
      const r = await runCli([...args, ...db], env);
      return r;
    };
    /**
     * Until the run has rewritten its status file since `status` was last started (PGlite; at
     * once if there was no file then: no run was writing one).
     */
    const nextReport = async () => {
      const file = statusFile;
      if (!file || readAt === -1) return;
      await waitFor("the run's next status report", () => written(file) !== readAt);
    };
    const statusJson = async () => {
      if (statusFile) readAt = written(statusFile);
      const r = await cli(["status", "--json"]);
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout) as {
        run_id: string;
        status: string;
        actions: {
          total: number;
          done: number;
          pending: number;
          in_flight: number;
          failed: number;
        };
        rate_per_s: number;
        eta_s: number | null;
        paused: boolean;
        held_by: string[];
        rate_budget: number;
      };
    };

    /**
     * Waits until status says something matching `what` holds the writes and none is in flight,
     * then checks that the sandbox received no create between that and the next status read (on
     * PGlite, of the run's next report). Each status read but the first waits for a new report.
     */
    const assertHeld = async (what: string) => {
      let polls = 0;
      await waitFor(`writes held by ${what}`, async () => {
        if (polls++ > 0) await nextReport();
        const s = await statusJson();
        return s.held_by.some((h) => h.includes(what)) && s.actions.in_flight === 0;
      });
      const held = writesIn(rig.sandbox, 0);
      await nextReport();
      const later = await statusJson();
      assert.ok(
        later.held_by.some((h) => h.includes(what)),
        `still held by ${what}`,
      );
      assert.equal(writesIn(rig.sandbox, 0), held, `no write while held by ${what}`);
    };

    it("status, pause, continue, set-rate and the throttle file steer the run, and every control is created exactly once", async () => {
      const throttle = join(dir, "throttle");
      const out = join(dir, "apply");
      const run = collect(
        spawnCli(
          [
            "apply",
            "--yes",
            "--rate",
            String(RATE),
            "--allow-rate-above-limit",
            "--throttle-file",
            throttle,
            "--out",
            out,
            ...db,
          ],
          env,
        ),
      );
      let ended: CliResult | undefined;
      void run.then((r) => {
        ended = r;
      });
      await waitFor("the first creates", () => {
        if (ended) assert.fail(`apply ended early (${ended.code}): ${ended.stderr}`);
        return writesIn(rig.sandbox, 0) > 120;
      });

      // status --json from a second process: done grows, the budget is the one asked, an ETA.
      // (How close the rate and the ETA come to the sandbox's count is a figure of the bench.)
      const first = await statusJson();
      assert.equal(first.status, "running");
      assert.equal(first.rate_budget, RATE);
      assert.equal(first.paused, false);
      // On PGlite status reads the file the run rewrites each second: each read after the first
      // waits for the run's next report, lest two reads see one.
      await nextReport();
      let second = await statusJson();
      for (let i = 0; i < 20 && second.actions.done <= first.actions.done; i++) {
        await nextReport();
        second = await statusJson();
      }
      assert.ok(second.actions.done > first.actions.done, "done grows");
      assert.ok(second.actions.total >= expected.length - 5, `total ${second.actions.total}`);
      assert.ok(second.rate_per_s <= RATE * 1.1, `never above the budget: ${second.rate_per_s}/s`);
      assert.ok(second.eta_s !== null && second.eta_s > 0, `an ETA while writing: ${second.eta_s}`);

      // pause: once the run says it holds the writes with none in flight, two of its reports
      // later the sandbox has still received no create.
      const paused = await cli(["pause"]);
      assert.equal(paused.code, 0, paused.stderr);
      assert.match(paused.stderr, /paused/);
      await assertHeld("paused");
      const cont = await cli(["continue"]);
      assert.equal(cont.code, 0, cont.stderr);
      const continuedAt = Date.now();
      await waitFor("writes again", () => writesIn(rig.sandbox, continuedAt) > 10);

      // set-rate 5: at most 5 creates in any one-second window from 2 s after it was acknowledged,
      // over the time the next 15 creates take.
      const slow = await cli(["set-rate", "5"]);
      const slowAt = Date.now();
      assert.equal(slow.code, 0, slow.stderr);
      await waitFor("15 creates at set-rate 5", () => writesIn(rig.sandbox, slowAt + 2_000) >= 15);
      const slowEnd = Date.now();
      let most = 0;
      // The sandbox stamps arrivals, so allow a few ms of network and scheduling jitter.
      for (let t = slowAt + 2_000; t + 1_000 <= slowEnd; t += 25) {
        most = Math.max(most, writesIn(rig.sandbox, t, t + 1_000 - 20));
      }
      assert.ok(most >= 1 && most <= 5, `${most} creates in one second at set-rate 5`);
      // The throttle file (while the run is slow, so it cannot end first): while it exists nothing
      // is sent; removing it resumes.
      writeFileSync(throttle, "");
      await assertHeld("throttle");
      rmSync(throttle);
      const releasedAt = Date.now();
      await waitFor("writes after the file went", () => writesIn(rig.sandbox, releasedAt) > 10);

      const fast = await cli(["set-rate", String(RATE), "--allow-rate-above-limit"]);
      assert.equal(fast.code, 0, fast.stderr);
      assert.equal((await statusJson()).rate_budget, RATE, "the rate is restored");

      const r = await run;
      assert.equal(r.code, 0, r.stderr);
      assertExactlyOnce(rig.sandbox, expected);
      assert.equal(rig.sandbox.stats().integrity.identitiesWithDuplicateClientSellOnly, 0);

      const md = readFileSync(join(out, "summary.md"), "utf8");
      assert.match(md, /## Pauses and rate changes/);
      for (const what of [
        "pause",
        "continue",
        "set-rate 5",
        `set-rate ${RATE}`,
        "throttle_on",
        "throttle_off",
      ]) {
        assert.ok(md.includes(what), `summary.md lists ${what}`);
      }
      const done = await statusJson();
      assert.equal(done.status, "completed");
      assert.equal(done.actions.done, done.actions.total);
    });

    it("pause and set-rate with no run going are refused and name what is missing", async () => {
      const p = await cli(["pause"]);
      assert.equal(p.code, 1);
      assert.match(p.stderr, /No apply, reconcile or revert is running/);
      const s = await cli(["set-rate", "80"]);
      assert.equal(s.code, 1);
      assert.match(s.stderr, /set-rate 80 is above the platform's limit of 50/);
    });
  });
});
