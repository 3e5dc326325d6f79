/**
 * Issue 51 §6: a revert of a run that a later reconcile superseded (the apply crashed, the
 * reconcile settled what it left) is refused, naming what to do instead, and deletes nothing.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { collect, runCli, spawnCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends } from "../helpers/db.ts";

backends.forEach((backend) => {
  describe(`a revert of a superseded run on ${backend.name}`, () => {
    let rig: CliRig;
    let out: string;
    let n = 0;
    const outArgs = () => ["--no-progress", "--out", join(out, String(++n))];

    before(async () => {
      rig = await startCliRig(backend, { identities: 300, seed: 5164 });
      out = mkdtempSync(join(tmpdir(), "revert-superseded-"));
    });
    after(async () => {
      await rig.close();
      rmSync(out, { recursive: true, force: true });
    });

    it("refuses to revert an apply whose unfinished actions a later reconcile superseded, naming reconcile --prune, and deletes nothing", async () => {
      const { sandbox, target, env } = rig;
      const child = spawnCli(["apply", "--yes", "--rate", "10", ...outArgs(), ...target.args], env);
      const done = collect(child);
      const end = Date.now() + 120_000;
      while (sandbox.stats().writes.creates < 3 && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 10));
      }
      child.kill("SIGKILL");
      const killed = await done;
      const applyId = /Run (\S+) \(apply\) started/.exec(killed.stderr)?.[1];
      assert.ok(applyId, killed.stderr);

      const reconcile = await runCli(["reconcile", "--yes", ...outArgs(), ...target.args], env);
      assert.equal(reconcile.code, 0, reconcile.stderr);
      assert.match(reconcile.stderr, new RegExp(`Settling unfinished run ${applyId}`));

      const deletes = sandbox.stats().writes.deletes;
      const revert = await runCli(["revert", applyId, "--yes", ...outArgs(), ...target.args], env);
      assert.equal(revert.code, 1, revert.stderr);
      assert.match(revert.stderr, /superseded \d+ of its actions/);
      assert.match(revert.stderr, /reconcile --prune/);
      assert.equal(sandbox.stats().writes.deletes, deletes, "nothing deleted");
    });
  });
});
