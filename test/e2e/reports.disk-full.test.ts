/**
 * A full disk under --out (a 32 KiB tmpfs, mounted here as root): `apply` makes its creates, then
 * cannot write its report. The message names the file and --out, `runs` shows the run's true counts
 * (not "-"), and `report RUN` (with and without --all) writes its complete report elsewhere: one row
 * per expected control of a flagged identity, the creates as sent. An identity with no flag and no
 * control has no finding, so it has no row, with --all or without (--all adds in_sync rows: controls
 * that already match their flags); a healthy plan of the same data lists the same identities and
 * findings. Skipped where tmpfs cannot be mounted.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { runCli } from "../helpers/cli.ts";
import { seededTarget } from "../helpers/cli-rig.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { type HostilePlatform, startHostilePlatform } from "../helpers/hostile-platform.ts";

const N = 300;
const SEED = 28;
const IDENTITIES = [...syntheticIdentities(N, SEED)];
const IDS = IDENTITIES.map((r) => r.id);

/**
 * The complete, true diff of an apply of the seeded source against a platform holding no control:
 * `identity finding action outcome`, sorted. Every user_disabled identity's client control created,
 * every admin_disabled identity's service control reported missing (the platform's to set).
 */
const SERVICE_DETAIL = "admin_disabled is true; the platform must migrate it";
const TRUE_ROWS = [
  ...IDENTITIES.filter((r) => r.user_disabled).map(
    (r) => `${r.id} missing_client_control create created`,
  ),
  ...IDENTITIES.filter((r) => r.admin_disabled).map(
    (r) => `${r.id} missing_service_control  ${SERVICE_DETAIL}`,
  ),
].sort();
const CREATES = IDENTITIES.filter((r) => r.user_disabled).length;

/** diff.csv's rows as `identity finding action outcome`, sorted (no cell here holds a comma). */
function diffRows(file: string): string[] {
  const [head, ...lines] = readFileSync(file, "utf8").trim().split("\n");
  const cols = (head ?? "").split(",");
  const at = (name: string) => cols.indexOf(name);
  return lines
    .map((l) => l.split(","))
    .map((c) =>
      [c[at("identity_id")], c[at("finding")], c[at("action")], c[at("outcome")]].join(" "),
    )
    .sort();
}

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
    const posted: string[] = [];
    before(async () => {
      target = await seededTarget(backend, { identities: N, seed: SEED });
      platform = await startHostilePlatform({
        identities: IDS,
        createControl: async (req) => {
          const body = req.body as { identity_id: string; type: string; reason_code: string };
          posted.push(body.identity_id);
          return {
            id: `ctl-${posted.length}`,
            type: body.type,
            set_by: "SET_BY_CLIENT",
            is_overridable: true,
            reason_code: body.reason_code,
            reason: null,
            created_at: new Date().toISOString(),
            deleted_at: null,
          };
        },
      });
    });
    after(async () => {
      await platform.close();
      await target.drop();
    });

    it("apply that made its creates and then cannot write its report names the file and --out, runs shows its true counts, and report RUN, with --all or without, writes its complete, true report elsewhere", async () => {
      // What a healthy run lists for this data: the same identities and findings.
      const planned = join(root, `plan-${backend.name}`);
      const plan = await runCli(
        ["plan", "--all", "--no-progress", "--state", "bulk", "--out", planned, ...target.args],
        platform.env,
      );
      assert.equal(plan.code, 2, plan.stderr);

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
      assert.deepEqual(
        [...posted].sort(),
        IDENTITIES.filter((x) => x.user_disabled)
          .map((x) => x.id)
          .sort(),
      );
      assert.match(
        r.stderr,
        new RegExp(
          `ERROR No space left on the device for ${out}/(diff\\.csv|summary\\.json|summary\\.md|report\\.html) \\(--out\\): the disk holding it is full\\. .* Run (\\S+) is recorded with its counts .* controls-migrate report \\S+ --out DIR`,
        ),
      );
      assert.doesNotMatch(r.stderr, /^ENOSPC: no space left on device, write$/m);
      const runId = /Run (\S+) is recorded with its counts/.exec(r.stderr)?.[1] as string;

      const row = await listedRun(target.args, runId);
      assert.equal(row?.status, "failed");
      const nonZero = Object.fromEntries(Object.entries(row?.counts ?? {}).filter(([, n]) => n));
      assert.deepEqual(nonZero, {
        missing_client_control: CREATES,
        missing_service_control: TRUE_ROWS.length - CREATES,
        "succeeded:created": CREATES,
      });

      const text = await runCli(["runs", ...target.args]);
      const line = text.stdout.split("\n").find((l) => l.startsWith(runId)) ?? "";
      assert.match(
        line,
        new RegExp(`failed .*missing_client_control=${CREATES} .*succeeded:created=${CREATES}`),
      );

      for (const all of [true, false]) {
        const elsewhere = join(root, `report-${backend.name}-${all ? "all" : "changes"}`);
        await checkReportAgain(target.args, runId, all, elsewhere, planned);
      }
    });
  });
}

/** `runs --json`'s row of `runId`. */
async function listedRun(args: readonly string[], runId: string) {
  const runs = await runCli(["runs", "--json", ...args]);
  assert.equal(runs.code, 0, runs.stderr);
  return runs.stdout
    .trim()
    .split("\n")
    .map(
      (l) => JSON.parse(l) as { id: string; status: string; counts: Record<string, number> | null },
    )
    .find((x) => x.id === runId);
}

/**
 * `report RUN` (`--all` or not) into `dir`: the complete, true report, with the same identities
 * and findings as the healthy plan in `planned`.
 */
async function checkReportAgain(
  args: readonly string[],
  runId: string,
  all: boolean,
  dir: string,
  planned: string,
): Promise<void> {
  const rep = await runCli(["report", runId, ...(all ? ["--all"] : []), "--out", dir, ...args]);
  assert.equal(rep.code, 0, rep.stderr);
  const summary = JSON.parse(readFileSync(join(dir, "summary.json"), "utf8")) as {
    run_id: string;
    outcomes: Record<string, number>;
    reports: { rows: number };
  };
  assert.equal(summary.run_id, runId);
  assert.deepEqual(summary.outcomes, { "succeeded:created": CREATES });
  assert.equal(summary.reports.rows, TRUE_ROWS.length);
  assert.deepEqual(diffRows(join(dir, "diff.csv")), TRUE_ROWS);
  const findings = (file: string) => diffRows(file).map((l) => l.split(" ").slice(0, 2).join(" "));
  assert.deepEqual(findings(join(dir, "diff.csv")), findings(join(planned, "diff.csv")));
}
