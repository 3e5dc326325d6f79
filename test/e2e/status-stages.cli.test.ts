/**
 * `status` from a second terminal through an apply's stages (issue 54): it names each stage as
 * the run reaches it, never shows action counts before actions exist ("Actions: 0 / 0"), and
 * answers across the hand-overs (reading to writing, writing to reporting) and while the run
 * writes its report. The run is held in each stage on purpose: the platform's listing and its
 * creates by an HTTP proxy that keeps requests unanswered until released; the report stage, on
 * PostgreSQL, by a lock on the table the run writes its request series to, held in a second
 * session; on PGlite, where the run alone opens its database and no outside lock reaches it, by
 * stopping the process (SIGSTOP) once its first report file appears, and letting it go (SIGCONT)
 * once status has answered.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, watch } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type CliResult, collect, runCli, spawnCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends } from "../helpers/db.ts";
import { startProxy, type TestProxy } from "../helpers/http-proxy.ts";
import { lockToolTable } from "../helpers/table-lock.ts";
import { waitFor } from "../helpers/wait-for.ts";

const N = 3_000;
const SEED = 43;
const STAGES = [
  "reading the source",
  "reading the platform",
  "reading the source and the platform",
  "classifying",
  "writing",
  "reporting",
];
const isListing = (r: { method: string; url: string }) =>
  r.method === "GET" && r.url.startsWith("/v2/identity/identities?");
const isCreate = (r: { method: string; url: string }) =>
  r.method === "POST" && r.url.startsWith("/v2/identity/controls");

interface Seen {
  status: string;
  stage: string | null;
  total: number;
  text: string;
}

for (const backend of backends) {
  describe(`status through an apply's stages on ${backend.name}`, { timeout: 900_000 }, () => {
    let rig: CliRig;
    let proxy: TestProxy;
    let dir: string;
    let env: Record<string, string>;

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED, sandbox: { latencyMs: 2 } });
      proxy = await startProxy(rig.sandbox.apiUrl);
      dir = mkdtempSync(join(tmpdir(), "cm-stages-"));
      env = { ...rig.env, API_BASE_URL: proxy.url, CONTROLS_PROGRESS: "false" };
    });
    after(async () => {
      proxy.holdWhen = () => false;
      proxy.release();
      await proxy.close();
      await rig.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("names each stage as the apply reaches it, shows no action counts before actions exist, and answers while the run writes its report", async (t) => {
      const seen: Seen[] = [];
      /** `status --json` and `status` at once; both exit 0 and tell the same stage. */
      async function sample(): Promise<Seen> {
        const [json, text] = await Promise.all([
          runCli(["status", "--json", ...rig.target.args], env),
          runCli(["status", ...rig.target.args], env),
        ]);
        assert.equal(json.code, 0, json.stderr);
        assert.equal(text.code, 0, text.stderr);
        const v = JSON.parse(json.stdout) as {
          status: string;
          stage: string | null;
          actions: { total: number };
        };
        const s = { status: v.status, stage: v.stage, total: v.actions.total, text: text.stdout };
        seen.push(s);
        // Never a count of actions before there are any, whatever the stage.
        assert.doesNotMatch(s.text, /Actions: 0 \/ 0 /, s.text);
        if (s.status === "running") assert.ok(s.stage === null || STAGES.includes(s.stage), s.text);
        // The text by its own stage (asked beside the JSON, it may be a moment apart): before
        // the writes, no rate, ETA or flowing writes.
        const head = /, running(?: \(([^)]+)\))?;/.exec(s.text);
        if (head && head[1] !== "writing" && head[1] !== "reporting") {
          assert.ok(head[1] === undefined || STAGES.includes(head[1]), s.text);
          assert.doesNotMatch(s.text, /ETA|Writes: flowing/, s.text);
          assert.match(s.text, /Writes: none yet \(the run is /, s.text);
        }
        return s;
      }
      /**
       * Samples until both answers name `stage` (each sample is two CLI processes, asked at once:
       * no sleep between; the two may straddle a change of stage).
       */
      async function until(stage: string): Promise<Seen> {
        let last: Seen | undefined;
        await waitFor(`status naming ${stage}`, async () => {
          last = await sample();
          return last.stage === stage && last.text.includes(`, running (${stage});`);
        });
        return last as Seen;
      }

      // 1. Reading: the platform's listing is held, the source pass goes on.
      proxy.holdWhen = isListing;
      const out = join(dir, "apply");
      mkdirSync(out);
      const apply = spawnCli(
        [
          "apply",
          "--yes",
          "--state",
          "bulk",
          "--no-wait-for-platform",
          "--rate",
          "200",
          "--allow-rate-above-limit",
        ].concat(["--out", out, ...rig.target.args]),
        env,
      );
      const run = collect(apply);
      let endedAs: CliResult | undefined;
      void run.then((r) => {
        endedAs = r;
      });
      const ended = () => endedAs;
      await waitFor("the listing held", () => proxy.held.length > 0 || ended() !== undefined);
      assert.equal(ended(), undefined, `apply ended early: ${ended()?.stderr}`);
      const reading = await until("reading the source and the platform");
      assert.match(reading.text, /running \(reading the source and the platform\);/, reading.text);
      assert.match(reading.text, /Actions: none yet/, reading.text);

      // 2. Writing: the listing goes through; the creates are held on the wire. Status is asked
      // all along the hand-over (classifying, the journal, the writes' server taking the channel).
      proxy.holdWhen = isCreate;
      proxy.release();
      const writing = await until("writing");
      await waitFor("a create held", () => proxy.held.some(isCreate) || ended() !== undefined);
      assert.equal(ended(), undefined, `apply ended early: ${ended()?.stderr}`);
      assert.ok(writing.total > 0, writing.text);
      assert.match(writing.text, new RegExp(`Actions: \\d+ / ${writing.total} done`), writing.text);
      assert.match(writing.text, /Writes: flowing\./, writing.text);

      // 3. Reporting: the creates go through; the report stage is held where it can be.
      const release = () => {
        proxy.holdWhen = () => false;
        proxy.release();
      };
      if (backend.name === "postgres") {
        const lock = await lockToolTable(await rig.target.open(), "request_series");
        try {
          release();
          const reporting = await until("reporting");
          assert.match(reporting.text, /running \(reporting\);/, reporting.text);
          assert.match(reporting.text, /Writes: done; the run writes its report\./, reporting.text);
          assert.equal(ended(), undefined, "the run was still reporting");
        } finally {
          await lock.release();
        }
      } else {
        // PGlite: the run alone opens its database, and `status` reads the status file the run
        // rewrites, naming the report stage before it writes any report file. The first report
        // file appearing in --out (its lock file aside) stops the run there (SIGSTOP) while
        // status is asked; then it goes on (SIGCONT).
        const pid = apply.pid ?? 0;
        let stopped = false;
        const watcher = watch(out, (_event, name) => {
          if (stopped || !name || name.startsWith(".controls-migrate-out")) return;
          process.kill(pid, "SIGSTOP");
          stopped = true;
        });
        try {
          release();
          await waitFor("a report file", () => stopped || ended() !== undefined);
        } finally {
          watcher.close();
        }
        assert.ok(stopped, `the run ended unseen: ${ended()?.stderr}`);
        try {
          const reporting = await sample();
          assert.equal(reporting.stage, "reporting", reporting.text);
          assert.match(reporting.text, /Writes: done; the run writes its report\./, reporting.text);
        } finally {
          process.kill(pid, "SIGCONT");
        }
      }
      const done = await run;
      assert.equal(done.code, 0, done.stderr);
      const final = await sample();
      assert.equal(final.status, "completed", final.text);

      // The stages seen, in the order seen: each named, none going back, reporting among them.
      const order = seen
        .filter((s) => s.status === "running" && s.stage !== null)
        .map((s) => s.stage as string)
        .filter((s, i, all) => s !== all[i - 1]);
      const positions = order.map((s) => STAGES.indexOf(s));
      assert.deepEqual(
        positions,
        [...positions].sort((a, b) => a - b),
        order.join(" → "),
      );
      for (const stage of ["reading the source and the platform", "writing", "reporting"]) {
        assert.ok(order.includes(stage), `${stage} in ${order.join(" → ")}`);
      }
      const reporting = seen.filter((s) => s.stage === "reporting").length;
      t.diagnostic(
        `stages seen: ${order.join(" → ")}; ${seen.length} samples, ${reporting} reporting`,
      );
    });
  });
}
