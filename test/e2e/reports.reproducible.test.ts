/**
 * `report RUN` regenerates a run's folder exactly as the run wrote it (issue 29 §3): diff.csv and
 * summary.json byte for byte, summary.md and report.html in the same order; and diff.csv names
 * the control each create made.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { parseCsv } from "../helpers/corpus.ts";
import { backends } from "../helpers/db.ts";

const N = 300;
const SEED = 29;
const FILES = ["diff.csv", "summary.json", "summary.md", "report.html"] as const;
const FAST = ["--rate", "300", "--allow-rate-above-limit", "--no-progress"];

for (const backend of backends) {
  describe(`reproducible reports on ${backend.name}`, { timeout: 180_000 }, () => {
    let rig: CliRig;
    let dir: string;
    let runId: string;
    const original = new Map<string, string>();

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED });
      dir = mkdtempSync(join(tmpdir(), "cm-repro-"));
      const r = await runCli(
        ["apply", "--yes", "--json", ...FAST, "--out", dir, ...rig.target.args],
        rig.env,
      );
      assert.equal(r.code, 0, r.stderr);
      runId = JSON.parse(r.stdout).run_id;
      for (const f of FILES) original.set(f, readFileSync(join(dir, f), "utf8"));
    });
    after(async () => {
      await rig.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("report RUN rewrites diff.csv, summary.json, summary.md and report.html byte for byte as the apply wrote them", async () => {
      const r = await runCli(["report", runId, "--out", dir, ...rig.target.args], rig.env);
      assert.equal(r.code, 0, r.stderr);
      for (const f of FILES) {
        assert.equal(readFileSync(join(dir, f), "utf8"), original.get(f), `${f} differs`);
      }
    });

    it("diff.csv gives each created control's id in observed_control_id, the id the platform holds", () => {
      const created = parseCsv(original.get("diff.csv") ?? "").filter(
        (row) => row.outcome === "created",
      );
      assert.ok(created.length > 20, `${created.length} created rows`);
      for (const row of created) {
        const held = rig.sandbox.controlsOf(row.identity_id ?? "").map((c) => c.id);
        assert.ok(row.observed_control_id, `no control id for ${row.identity_id}`);
        assert.ok(held.includes(row.observed_control_id), `${row.observed_control_id} not held`);
      }
    });
  });
}
