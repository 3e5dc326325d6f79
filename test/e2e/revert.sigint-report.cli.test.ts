/**
 * One SIGINT while a revert writes its report (issue 52): the revert exits by itself, 130, with
 * the run recorded interrupted and its counts kept, no temporary report file left behind, and a
 * resume line that writes the report. The run is held in its report stage as in
 * status-stages.cli.test.ts: on PostgreSQL by a lock on the table it writes its request series to,
 * held in a second session until the signal is sent; on PGlite, where no outside lock reaches the
 * run's database, by stopping the process (SIGSTOP) once its first report file appears, sending the
 * signal, and letting it go (SIGCONT).
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, watch } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { collect, runCli, spawnCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends } from "../helpers/db.ts";
import { lockToolTable } from "../helpers/table-lock.ts";
import { waitFor } from "../helpers/wait-for.ts";

const N = 1_500;
const SEED = 52;
const FAST = ["--rate", "300", "--allow-rate-above-limit", "--retry-base-ms", "5"];

for (const backend of backends) {
  describe(`SIGINT in a revert's report stage on ${backend.name}`, { timeout: 600_000 }, () => {
    let rig: CliRig;
    let dir: string;
    let env: Record<string, string>;
    const cli = (args: string[]) => runCli([...args, ...rig.target.args], env);

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED, sandbox: { latencyMs: 1 } });
      dir = mkdtempSync(join(tmpdir(), "cm-revert-sigint-"));
      env = { ...rig.env, CONTROLS_PROGRESS: "false" };
    });
    after(async () => {
      await rig.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("one SIGINT while the revert writes its report: it exits by itself with 130, the run is recorded interrupted with its deletes counted, no temporary file is left, and the resume line writes the report", async () => {
      const applied = await cli(["apply", "--yes", "--json", ...FAST, "--out", join(dir, "a")]);
      assert.equal(applied.code, 0, applied.stderr);
      const applyId = JSON.parse(applied.stdout).run_id as string;
      const out = join(dir, "revert");
      mkdirSync(out);
      const args = ["revert", applyId, "--yes", ...FAST, "--out", out, ...rig.target.args];
      const child = spawnCli(args, env);
      const done = collect(child);
      let exited = false;
      void done.finally(() => {
        exited = true;
      });
      const pid = child.pid ?? 0;

      if (backend.name === "postgres") {
        const lock = await lockToolTable(await rig.target.open(), "request_series");
        try {
          // The revert's report stage waits on the lock: status names it, then the signal.
          await waitFor("status naming the report stage", async () => {
            assert.equal(exited, false, "the revert ended before its report stage");
            const s = await cli(["status", "--json"]);
            return s.code === 0 && JSON.parse(s.stdout).stage === "reporting";
          });
          process.kill(pid, "SIGINT");
        } finally {
          await lock.release();
        }
      } else {
        let stopped = false;
        const watcher = watch(out, (_event, name) => {
          // Not the folder's lock, nor the start-up's check that the folder can be written.
          if (stopped || !name || name.startsWith(".controls-migrate-")) return;
          process.kill(pid, "SIGSTOP");
          stopped = true;
        });
        try {
          await waitFor("a report file", () => stopped || exited);
        } finally {
          watcher.close();
        }
        assert.ok(stopped, "the revert ended before its first report file");
        process.kill(pid, "SIGINT");
        process.kill(pid, "SIGCONT");
      }

      const r = await done;
      assert.equal(r.code, 130, r.stderr);
      assert.doesNotMatch(r.stderr, /Second SIGINT/);
      const resume = /Resume with: (controls-migrate report (\S+) --out (\S+))/.exec(r.stderr);
      assert.ok(resume, r.stderr);
      const revertId = resume[2] as string;
      assert.deepEqual(
        readdirSync(out).filter((f) => f.endsWith(".tmp")),
        [],
        "no temporary report file is left",
      );

      const handle = await rig.target.open();
      try {
        const run = await handle.db
          .selectFrom("controls_migration.runs")
          .select(["status", "exit_code", "counts", "error"])
          .where("id", "=", revertId)
          .executeTakeFirstOrThrow();
        assert.equal(run.status, "interrupted");
        assert.equal(run.exit_code, 130);
        assert.match(String(run.error), /Interrupted while writing the report/);
        const counts = (
          typeof run.counts === "string" ? JSON.parse(run.counts) : run.counts
        ) as Record<string, number>;
        assert.ok((counts["succeeded:deleted"] ?? 0) > 0, JSON.stringify(counts));
      } finally {
        await handle.close();
      }

      // The resume line writes the report: a diff.csv row per control deleted.
      const written = await cli(["report", revertId, "--out", out, "--json"]);
      assert.equal(written.code, 0, written.stderr);
      const csv = readFileSync(join(out, "diff.csv"), "utf8").trim().split("\n");
      assert.ok(csv.length > 1, "diff.csv holds the deletes");
      assert.ok(
        csv.slice(1).every((line) => line.includes(",delete,")),
        csv[1],
      );
    });
  });
}
