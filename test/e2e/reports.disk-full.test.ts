/**
 * A full disk under --out (a 32 KiB tmpfs, mounted here as root): `apply` makes its creates, then
 * cannot write diff.csv. The message names the file and --out, `runs` shows the run's true counts
 * (not "-"), and `report RUN` writes its report elsewhere. Skipped where tmpfs cannot be mounted.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { loadSourceConfig } from "../../src/config.ts";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { seedSource } from "../../src/db/seed.ts";
import { runCli } from "../helpers/cli.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { type HostilePlatform, startHostilePlatform } from "../helpers/hostile-platform.ts";

const N = 300;
const SEED = 28;
const IDS = [...syntheticIdentities(N, SEED)].map((r) => r.id);

const root = mkdtempSync(join(tmpdir(), "cm-disk-full-"));
const full = join(root, "full");
mkdirSync(full);
const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=32k", "tmpfs", full]);
const skip =
  mounted.status === 0
    ? false
    : `a tmpfs cannot be mounted here (${String(mounted.stderr).trim() || `exit ${mounted.status}`}); run as root to test a full disk`;

after(() => {
  if (mounted.status === 0) spawnSync("umount", [full]);
  rmSync(root, { recursive: true, force: true });
});

for (const backend of backends) {
  describe(`a full disk under --out on ${backend.name}`, { skip, timeout: 300_000 }, () => {
    let target: TestTarget;
    let platform: HostilePlatform;
    before(async () => {
      target = await backend.target();
      const h = await target.open({ migrate: true });
      try {
        await seedSource(h.db, loadSourceConfig({}, {}), { identities: N, seed: SEED });
      } finally {
        await h.close();
      }
      platform = await startHostilePlatform({ identities: IDS });
    });
    after(async () => {
      await platform.close();
      await target.drop();
    });

    it("apply that made its creates and then cannot write its report names the file and --out, runs shows its true counts, and report RUN writes its report elsewhere", async () => {
      const out = join(full, backend.name);
      const r = await runCli(
        [
          "apply",
          "--yes",
          "--all",
          "--no-progress",
          "--state",
          "bulk",
          "--out",
          out,
          ...target.args,
        ],
        platform.env,
      );
      assert.equal(r.code, 1, r.stderr);
      const created = platform.calls["POST /v2/identity/controls"] ?? 0;
      assert.ok(created > 10, `only ${created} creates were sent`);
      assert.match(
        r.stderr,
        new RegExp(
          `ERROR No space left on the device for ${out}/(diff\\.csv|summary\\.json|summary\\.md|report\\.html) \\(--out\\): the disk holding it is full\\. .* Run (\\S+) is recorded with its counts .* controls-migrate report \\S+ --out DIR`,
        ),
      );
      assert.doesNotMatch(r.stderr, /^ENOSPC: no space left on device, write$/m);
      const runId = /Run (\S+) is recorded with its counts/.exec(r.stderr)?.[1] as string;

      const runs = await runCli(["runs", "--json", ...target.args]);
      assert.equal(runs.code, 0, runs.stderr);
      const row = runs.stdout
        .trim()
        .split("\n")
        .map(
          (l) =>
            JSON.parse(l) as { id: string; status: string; counts: Record<string, number> | null },
        )
        .find((x) => x.id === runId);
      assert.equal(row?.status, "failed");
      assert.equal(row?.counts?.["succeeded:created"], created, JSON.stringify(row?.counts));

      const elsewhere = join(root, `report-${backend.name}`);
      const rep = await runCli(["report", runId, "--all", "--out", elsewhere, ...target.args]);
      assert.equal(rep.code, 0, rep.stderr);
      const summary = JSON.parse(readFileSync(join(elsewhere, "summary.json"), "utf8")) as {
        run_id: string;
        outcomes: Record<string, number>;
      };
      assert.equal(summary.run_id, runId);
      assert.equal(
        summary.outcomes["succeeded:created"],
        created,
        JSON.stringify(summary.outcomes),
      );
      const csv = readFileSync(join(elsewhere, "diff.csv"), "utf8").trim().split("\n");
      assert.ok(
        csv.length - 1 >= created,
        `diff.csv lists ${csv.length - 1} rows for ${created} creates`,
      );
    });
  });
}
