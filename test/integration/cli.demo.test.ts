import assert from "node:assert/strict";
import { existsSync, rmSync } from "node:fs";
import { describe, it } from "node:test";
import { runCli } from "../helpers/cli.ts";

/** Removes the report folders a demo run printed (they land in the repository's reports/). */
const dropReports = (stdout: string) => {
  for (const dir of JSON.parse(stdout).reports as string[])
    rmSync(dir, { recursive: true, force: true });
};

/** The demo's database folder, as its log names it. */
const dataDirOf = (stderr: string) => /source rows \(\d+ bad\) in (\S+);/.exec(stderr)?.[1];

describe("controls-migrate demo", () => {
  it("removes its throwaway .data/demo-* folder when it finishes, and keeps it with --keep", async () => {
    const r = await runCli(["demo", "--identities", "300", "--no-progress", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    dropReports(r.stdout);
    const dir = dataDirOf(r.stderr);
    assert.ok(dir?.includes("demo-"), r.stderr);
    assert.ok(dir);
    assert.equal(existsSync(dir), false, `${dir} is removed`);
    for (const beside of [`${dir}.control`, `${dir}.status.json`, `${dir}.lock`]) {
      assert.equal(existsSync(beside), false, `${beside} is removed too`);
    }

    const kept = await runCli(["demo", "--identities", "300", "--no-progress", "--keep", "--json"]);
    assert.equal(kept.code, 0, kept.stderr);
    dropReports(kept.stdout);
    const keptDir = dataDirOf(kept.stderr);
    assert.ok(keptDir);
    try {
      assert.equal(existsSync(keptDir), true, `${keptDir} is kept`);
    } finally {
      rmSync(keptDir, { recursive: true, force: true });
    }
  });
});
