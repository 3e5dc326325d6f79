/**
 * Report folders are written safely: a folder holding another run's report is refused unless
 * --force, and a symbolic link planted under a report file's name is replaced, never followed.
 */
import assert from "node:assert/strict";
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type Sandbox, startSandbox } from "controls-sandbox";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { runCli } from "../helpers/cli.ts";
import { seededTarget } from "../helpers/cli-rig.ts";
import { backends, type TestTarget } from "../helpers/db.ts";

const N = 200;
const SEED = 5;
const runIdIn = (dir: string) =>
  (JSON.parse(readFileSync(join(dir, "summary.json"), "utf8")) as { run_id: string }).run_id;

for (const backend of backends) {
  describe(`report folders on ${backend.name}`, { timeout: 180_000 }, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;
    let root: string;
    let plan: (out: string, ...extra: string[]) => ReturnType<typeof runCli>;
    /** Two folders, each holding the report of a plan of its own, written in `before`. */
    let shared: string;
    let a: string;

    before(async () => {
      sandbox = await startSandbox({ port: 0, rateLimitRps: 0, tokenRateLimitRps: 0 });
      sandbox.seedIdentities(syntheticIdentities(N, SEED), { migratedFraction: 0.5, seed: SEED });
      target = await seededTarget(backend, { identities: N, seed: SEED });
      env = {
        API_BASE_URL: sandbox.apiUrl,
        OAUTH_TOKEN_URL: sandbox.tokenUrl,
        OAUTH_CLIENT_ID: sandbox.credentials.clientId,
        OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
      };
      root = mkdtempSync(join(tmpdir(), "cm-out-"));
      plan = (out, ...extra) =>
        runCli(["plan", "--no-progress", "--out", out, ...extra, ...target.args], env);
      shared = join(root, "shared");
      a = join(root, "a");
      for (const dir of [shared, a]) {
        const r = await plan(dir);
        assert.equal(r.code, 2, r.stderr);
      }
    });
    after(async () => {
      await sandbox.close();
      await target.drop();
      rmSync(root, { recursive: true, force: true });
    });

    it("refuses --out pointing at another run's report folder, and replaces it with --force", async () => {
      // The report of the plan `before` wrote there (the next test's report into it is refused).
      const dir = shared;
      const firstId = runIdIn(dir);
      const firstCsv = readFileSync(join(dir, "diff.csv"), "utf8");

      const refused = await plan(dir);
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(
        refused.stderr,
        new RegExp(
          `ERROR The report folder .*shared already holds the report of run ${firstId}; .*pass --force`,
        ),
      );
      assert.doesNotMatch(refused.stderr, /Run \S+ \(plan\) started/, "refused before any work");
      assert.equal(runIdIn(dir), firstId);
      assert.equal(readFileSync(join(dir, "diff.csv"), "utf8"), firstCsv);

      const forced = await plan(dir, "--force");
      assert.equal(forced.code, 2, forced.stderr);
      assert.notEqual(runIdIn(dir), firstId);
    });

    it("report RUN --out into another run's folder is refused too", async () => {
      const b = shared;
      assert.notEqual(runIdIn(a), runIdIn(b), "a and b hold two runs' reports");
      const r = await runCli(["report", runIdIn(a), "--out", b, ...target.args], env);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /already holds the report of run/);
      // Its own folder is fine.
      const own = await runCli(["report", runIdIn(a), "--out", a, ...target.args], env);
      assert.equal(own.code, 0, own.stderr);
    });

    it("replaces symbolic links planted as diff.csv and summary.md instead of writing through them", async () => {
      const dir = join(root, "planted");
      mkdirSync(dir);
      const victims = [join(root, "victim-1.txt"), join(root, "victim-2.txt")];
      for (const v of victims) writeFileSync(v, "keep me");
      symlinkSync(victims[0]!, join(dir, "diff.csv"));
      symlinkSync(victims[1]!, join(dir, "summary.md"));
      const r = await plan(dir);
      assert.equal(r.code, 2, r.stderr);
      for (const v of victims) assert.equal(readFileSync(v, "utf8"), "keep me");
      for (const f of ["diff.csv", "summary.md", "summary.json"]) {
        assert.ok(lstatSync(join(dir, f)).isFile(), `${f} is a plain file`);
      }
      assert.match(readFileSync(join(dir, "diff.csv"), "utf8"), /^run_id,identity_id,/);
    });
  });
}
