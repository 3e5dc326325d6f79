/**
 * `--metrics-file`: plan, reconcile and a failed run write their figures in the Prometheus text
 * format; a real parser reads the file back and every value is checked against summary.json.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { startSandbox } from "controls-sandbox";
import { sql } from "kysely";
import parsePrometheusTextFormat, { type ParsedFamily } from "parse-prometheus-text-format";
import { prng, syntheticIdentities, uuidFrom } from "../../src/contract/index.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
import { runCli } from "../helpers/cli.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { startProxy } from "../helpers/http-proxy.ts";

const IDENTITIES = 400;

/** The file parsed: metric name → samples (labels and numeric value). */
function readMetrics(path: string) {
  const families = parsePrometheusTextFormat(readFileSync(path, "utf8"));
  for (const f of families) {
    assert.equal(f.type, "GAUGE", `${f.name} is a gauge`);
    assert.ok(f.help.length > 10, `${f.name} has a help text`);
  }
  const byName = new Map<string, ParsedFamily>(families.map((f) => [f.name, f]));
  const samples = (name: string) =>
    (byName.get(name)?.metrics ?? []).map((m) => ({
      labels: m.labels ?? {},
      value: Number(m.value),
    }));
  const one = (name: string, labels: Record<string, string> = {}) => {
    const found = samples(name).filter((s) =>
      Object.entries(labels).every(([k, v]) => s.labels[k] === v),
    );
    assert.equal(found.length, 1, `one sample of ${name} ${JSON.stringify(labels)}`);
    return found[0]!.value;
  };
  return { samples, one, names: [...byName.keys()] };
}

/** Every figure of summary.json, checked against the metrics file. */
function assertMatchesSummary(path: string, s: RunSummary): void {
  const m = readMetrics(path);
  const mode = s.mode;
  assert.deepEqual(m.samples("controls_migrate_last_run_info"), [
    { labels: { mode, run_id: s.run_id, status: s.status }, value: 1 },
  ]);
  assert.equal(m.one("controls_migrate_last_run_exit_code", { mode }), s.exit_code);
  assert.equal(m.one("controls_migrate_last_run_duration_seconds", { mode }), s.duration_s);
  assert.equal(
    m.one("controls_migrate_last_run_timestamp_seconds", { mode }),
    Math.round(Date.parse(s.finished_at) / 1000),
  );
  assert.equal(m.one("controls_migrate_source_rows", { kind: "read" }), s.source.rows_read);
  assert.equal(m.one("controls_migrate_source_rows", { kind: "candidates" }), s.source.candidates);
  assert.equal(m.one("controls_migrate_source_rows", { kind: "anomalies" }), s.source.anomalies);
  const findings = Object.fromEntries(
    m.samples("controls_migrate_findings").map((x) => [x.labels.finding, x.value]),
  );
  assert.deepEqual(findings, s.findings);
  const outcomes = Object.fromEntries(
    m
      .samples("controls_migrate_action_outcomes")
      .map((x) => [`${x.labels.status}:${x.labels.outcome}`, x.value]),
  );
  // A create answered 404 is no failure anywhere: its status label says so.
  const expected = Object.fromEntries(
    Object.entries(s.outcomes).map(([k, n]) => [
      k === "failed:identity_not_found" ? "not_on_platform:identity_not_found" : k,
      n,
    ]),
  );
  assert.deepEqual(outcomes, expected);
  for (const [endpoint, f] of Object.entries(s.requests)) {
    const perStatus = m
      .samples("controls_migrate_requests")
      .filter((x) => x.labels.endpoint === endpoint);
    assert.equal(
      perStatus.reduce((n, x) => n + x.value, 0),
      f.count,
      `requests of ${endpoint}`,
    );
    for (const [status, n] of Object.entries(f.statuses)) {
      assert.equal(m.one("controls_migrate_requests", { endpoint, status }), n);
    }
    assert.equal(m.one("controls_migrate_rate_limited_requests", { endpoint }), f.rate_limited);
    assert.equal(m.one("controls_migrate_request_retries", { endpoint }), f.retries);
    assert.equal(m.one("controls_migrate_ambiguous_requests", { endpoint }), f.ambiguous);
  }
}

for (const backend of backends) {
  describe(`--metrics-file through the CLI on ${backend.name}`, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;
    const dir = mkdtempSync(join(tmpdir(), "cm-metrics-"));
    const metrics = join(dir, "textfile", "controls_migrate.prom");
    const cli = (args: string[]) =>
      runCli([...args, ...target.args, "--no-progress", "--metrics-file", metrics], env);

    before(async () => {
      sandbox = await startSandbox({ port: 0, rateLimitRps: 0, tokenRateLimitRps: 0 });
      sandbox.seedIdentities(syntheticIdentities(IDENTITIES, 3), {
        migratedFraction: 0.5,
        driftFraction: 0.05,
        seed: 3,
      });
      target = await backend.target();
      const seeded = await runCli([
        "db",
        "seed",
        "--identities",
        `${IDENTITIES}`,
        "--seed",
        "3",
        ...target.args,
      ]);
      assert.equal(seeded.code, 0, seeded.stderr);
      env = {
        API_BASE_URL: sandbox.apiUrl,
        OAUTH_TOKEN_URL: sandbox.tokenUrl,
        OAUTH_CLIENT_ID: sandbox.credentials.clientId,
        OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
      };
      await import("node:fs/promises").then((fs) => fs.mkdir(join(dir, "textfile")));
    });

    after(async () => {
      await sandbox.close();
      await target.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it("plan writes its findings, requests per endpoint and status, duration and exit code as summary.json has them", async () => {
      const r = await cli(["plan", "--out", join(dir, "plan")]);
      assert.equal(r.code, 2, r.stderr);
      const s = JSON.parse(readFileSync(join(dir, "plan", "summary.json"), "utf8")) as RunSummary;
      assert.ok(Object.keys(s.requests).length >= 2);
      assertMatchesSummary(metrics, s);
      // No reconcile has completed yet on this database.
      assert.equal(
        readMetrics(metrics).one("controls_migrate_last_successful_reconcile_timestamp_seconds"),
        0,
      );
    });

    it("reconcile replaces the file whole (a new file renamed over the old) and records itself as the last successful reconcile", async () => {
      const before = statSync(metrics).ino;
      const r = await cli([
        "reconcile",
        "--yes",
        "--exit-on",
        "any",
        "--out",
        join(dir, "reconcile"),
      ]);
      assert.equal(r.code, 2, r.stderr);
      const s = JSON.parse(
        readFileSync(join(dir, "reconcile", "summary.json"), "utf8"),
      ) as RunSummary;
      assert.ok((s.outcomes["succeeded:created"] ?? 0) > 0);
      assertMatchesSummary(metrics, s);
      assert.notEqual(statSync(metrics).ino, before, "renamed into place, not rewritten in place");
      assert.deepEqual(readdirSync(join(dir, "textfile")), ["controls_migrate.prom"]);
      const last = readMetrics(metrics).one(
        "controls_migrate_last_successful_reconcile_timestamp_seconds",
      );
      const finished = Date.parse(s.finished_at) / 1000;
      assert.ok(last >= Math.floor(finished) && last <= finished + 60, `${last} vs ${finished}`);
    });

    it("a plan that fails still writes its mode, exit code 1 and the last successful reconcile", async () => {
      const lastReconcile = readMetrics(metrics).one(
        "controls_migrate_last_successful_reconcile_timestamp_seconds",
      );
      const r = await runCli(
        [
          "plan",
          ...target.args,
          "--no-progress",
          "--metrics-file",
          metrics,
          "--source-relation",
          "no_such_relation",
        ],
        env,
      );
      assert.equal(r.code, 1, r.stderr);
      const m = readMetrics(metrics);
      assert.equal(m.samples("controls_migrate_last_run_info")[0]?.labels.status, "failed");
      assert.equal(m.one("controls_migrate_last_run_exit_code", { mode: "plan" }), 1);
      assert.equal(
        m.one("controls_migrate_last_successful_reconcile_timestamp_seconds"),
        lastReconcile,
      );
      assert.deepEqual(m.samples("controls_migrate_findings"), []);
    });

    it("a create answered 404 is status not_on_platform, not failed: the failed actions the file counts are those exit code 3 counts", async () => {
      const gone = uuidFrom(prng(404));
      sandbox.seedIdentities([{ id: gone, user_disabled: true, admin_disabled: false }], {
        migratedFraction: 0,
        driftFraction: 0,
      });
      const h = await target.open({ migrate: false });
      await sql`insert into identities (id, user_disabled, admin_disabled)
        values (${gone}, true, false)`.execute(h.db);
      await h.close();
      // The identity goes once filtered's read by id is answered, before its create is sent.
      const proxy = await startProxy(sandbox.apiUrl);
      proxy.rewrite = (r, body) => {
        if (r.method === "GET" && r.url === `/v2/identity/identities/${gone}`)
          sandbox.removeIdentity(gone);
        return body;
      };
      const out = join(dir, "reconcile-404");
      const r = await runCli(
        [
          "reconcile",
          ...["--yes", "--state", "filtered", "--out", out, ...target.args],
          ...["--no-progress", "--metrics-file", metrics],
        ],
        { ...env, API_BASE_URL: proxy.url },
      ).finally(() => proxy.close());
      const s = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as RunSummary;
      assert.equal(s.outcomes["failed:identity_not_found"], 1, r.stderr);
      assert.notEqual(r.code, 3, "a 404 is no failed action");
      assertMatchesSummary(metrics, s);
      const m = readMetrics(metrics);
      assert.equal(
        m.one("controls_migrate_action_outcomes", {
          status: "not_on_platform",
          outcome: "identity_not_found",
        }),
        1,
      );
      assert.deepEqual(
        m.samples("controls_migrate_action_outcomes").filter((x) => x.labels.status === "failed"),
        [],
        "no failed action",
      );
    });
  });
}
