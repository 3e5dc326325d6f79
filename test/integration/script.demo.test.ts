import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { describe, it } from "node:test";
import { DIST_IS_CURRENT } from "../helpers/cli-entry.ts";
import { runDemo } from "../helpers/demo.ts";

/** The demo's database folder, as its log names it. */
const dataDirOf = (stderr: string) => /source rows \(\d+ bad\) in (\S+);/.exec(stderr)?.[1];

describe("npm run demo (scripts/run-demo.mjs, the bundled scripts/demo.ts)", () => {
  it("rehearses plan, apply and reconcile to no client work left from the build's bundle, removes its .data/demo-* folder, keeps it with --keep, and prints its JSON only with --json", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "controls-demo-"));
    try {
      const r = await runDemo(cwd, ["--identities", "300", "--no-progress", "--json"]);
      assert.equal(r.code, 0, r.stderr);
      if (DIST_IS_CURRENT) {
        // The build's bundle, though the suite compiled each source into a newer .js beside it.
        assert.doesNotMatch(r.stderr, /runs from its sources/);
      }
      const out = JSON.parse(r.stdout) as {
        reports: string[];
        final_missing_client_controls: number;
        duplicates_created_by_tool: number;
      };
      assert.equal(out.reports.length, 3, "plan, apply and reconcile each wrote a report");
      assert.equal(out.final_missing_client_controls, 0);
      assert.equal(out.duplicates_created_by_tool, 0);
      for (const dir of out.reports) {
        const where = isAbsolute(dir) ? dir : join(cwd, dir);
        assert.ok(existsSync(join(where, "summary.json")), `${dir} holds summary.json`);
      }
      const dir = dataDirOf(r.stderr) ?? "";
      assert.ok(dir.startsWith(join(cwd, ".data", "demo-")), r.stderr);
      assert.equal(existsSync(dir), false, `${dir} is removed`);
      for (const beside of [`${dir}.control`, `${dir}.status.json`, `${dir}.lock`]) {
        assert.equal(existsSync(beside), false, `${beside} is removed too`);
      }

      // Without --json the demo prints no JSON object: its tables and open: lines are on stderr.
      const kept = await runDemo(cwd, ["--identities", "300", "--no-progress", "--keep"]);
      assert.equal(kept.code, 0, kept.stderr);
      assert.equal(kept.stdout, "", "nothing on stdout without --json");
      assert.match(kept.stderr, /open: \S+report\.html/);
      const keptDir = dataDirOf(kept.stderr);
      assert.ok(keptDir);
      assert.equal(existsSync(keptDir), true, `${keptDir} is kept`);
      assert.deepEqual(
        readdirSync(join(cwd, ".data")).filter((f) => f.startsWith("demo-")),
        [keptDir.slice(join(cwd, ".data").length + 1)],
        "only the kept folder is left",
      );
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it("refuses an unknown flag naming it, with exit 1 and nothing on stdout", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "controls-demo-"));
    try {
      const r = await runDemo(cwd, ["--identitys", "300"]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /identitys/);
      assert.equal(r.stdout, "");
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
