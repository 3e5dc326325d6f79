import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { ControlRecord, Sandbox } from "controls-sandbox";
import { startSandbox } from "controls-sandbox";
import { sql } from "kysely";
import { safeCell } from "../../src/reports/csv.ts";
import { runCli } from "../helpers/cli.ts";
import {
  CORPUS,
  type CorpusCase,
  craftPlatform,
  DUPLICATE_CONTROLS_ID,
  type ExpectedFinding,
  expectedFindings,
  type Policy,
  parseCsv,
  TEXT_FLAG_CASES,
} from "../helpers/corpus.ts";
import { backends, type TestTarget } from "../helpers/db.ts";

interface FindingRow {
  identity_id: string | null;
  finding: string;
  detail: string | null;
  other_active_controls: string | null;
  observed_set_by: string | null;
}

interface SourceRow {
  identity_id: string | null;
  anomaly: string | null;
  anomaly_detail: string | null;
  valid: boolean | null;
}

const FORMULA_START = /^[=+\-@\t\r]/;
/** What diff.csv must hold for an id: formula-looking cells get a leading apostrophe. */
/** What diff.csv shows for an id: control and bidi characters escaped, formulas neutralised. */
const csvCell = (id: string | null) => (id === null ? "" : safeCell(id));

const platformIds = CORPUS.flatMap((c) => (c.platform ? [c.platform.id] : []));
const createdUnder = (policies: readonly Policy[]) =>
  new Set(
    CORPUS.filter((c) => c.creates?.some((p) => policies.includes(p))).map((c) => c.platform!.id),
  );
const invalidRowCount = (policy: Policy) =>
  CORPUS.flatMap((c) => expectedFindings(c, policy)).filter(
    (f) => f.finding === "invalid_source_row",
  ).length;

function controlsById(sandbox: Sandbox): Map<string, ControlRecord[]> {
  return new Map(platformIds.map((id) => [id, sandbox.controlsOf(id, { includeDeleted: true })]));
}

function posts(sandbox: Sandbox): number {
  const byStatus = sandbox.stats().requests["POST /v2/identity/controls"] ?? {};
  return Object.values(byStatus).reduce((a, b) => a + b, 0);
}

/** Compares one case's findings (DB rows) and diff.csv rows with what the corpus expects. */
function checkCase(
  c: CorpusCase,
  expected: readonly ExpectedFinding[],
  findings: FindingRow[],
  csv: Record<string, string>[],
  withInSync: boolean,
): void {
  const id = c.rows[0]!.id;
  const got = findings
    .filter((f) => f.identity_id === id)
    .sort((a, b) => a.finding.localeCompare(b.finding));
  const want = [...expected].sort((a, b) => a.finding.localeCompare(b.finding));
  assert.deepEqual(
    got.map((f) => f.finding),
    want.map((f) => f.finding),
    `${c.key}: findings`,
  );
  want.forEach((w, i) => {
    const f = got[i]!;
    assert.match(f.detail ?? "", w.detail, `${c.key}: detail of ${w.finding}`);
    if (w.other) assert.equal(f.other_active_controls, w.other, `${c.key}: other_active_controls`);
    if (w.observedSetBy) assert.equal(f.observed_set_by, w.observedSetBy, `${c.key}: set_by`);
    if (w.finding === "in_sync" && !withInSync) return;
    const line = csv.find(
      (r) =>
        r.identity_id === csvCell(id) && r.finding === w.finding && w.detail.test(r.outcome ?? ""),
    );
    assert.ok(line, `${c.key}: diff.csv has no ${w.finding} row with the reason for this id`);
    if (w.other) assert.equal(line.other_active_controls, w.other);
    if (w.action !== undefined) assert.equal(line.action, w.action, `${c.key}: action`);
  });
}

for (const backend of backends) {
  describe(`the bad-input corpus through plan, apply and reconcile on ${backend.name}`, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;
    let baseline: Map<string, ControlRecord[]>;
    /**
     * The summary and source rows of the first plan (warn, bulk, --all), which later tests inspect
     * further.
     */
    let warnPlan:
      | { summary: { run_id: string; source: { anomalies: number } }; sourceRows: SourceRow[] }
      | undefined;
    const out = mkdtempSync(join(tmpdir(), "cm-corpus-"));
    const cli = (args: string[]) => runCli([...args, ...target.args, "--no-progress"], env);

    /**
     * A run's findings and source rows, in one open of the database (each open of PGlite costs
     * this process about 0.5 s of CPU).
     */
    async function journalOf(runId: string) {
      const h = await target.open();
      const rows = async <T>(query: string) =>
        (await sql<T>`${sql.raw(query)} where run_id = ${runId}`.execute(h.db)).rows;
      try {
        return {
          findings: await rows<FindingRow>(
            "select identity_id, finding, detail, other_active_controls, observed_set_by from controls_migration.findings",
          ),
          sourceRows: await rows<SourceRow>(
            "select identity_id, anomaly, anomaly_detail, valid from controls_migration.source_rows",
          ),
        };
      } finally {
        await h.close();
      }
    }

    /** Runs plan and returns its summary, findings and diff.csv rows. */
    async function plan(name: string, extra: string[]) {
      const dir = join(out, name);
      const r = await cli(["plan", "--json", "--out", dir, ...extra]);
      assert.equal(r.code, 2, r.stderr);
      const summary = JSON.parse(r.stdout);
      const csv = parseCsv(readFileSync(join(dir, "diff.csv"), "utf8"));
      return { summary, csv, ...(await journalOf(summary.run_id)), dir };
    }

    /** Every platform identity's controls equal `before`, plus one new active client SELL_ONLY for `created`. */
    function assertControls(before: Map<string, ControlRecord[]>, created: Set<string>): void {
      for (const id of platformIds) {
        const now = sandbox.controlsOf(id, { includeDeleted: true });
        const was = before.get(id)!;
        assert.deepEqual(
          now.slice(0, was.length),
          was,
          `controls of ${JSON.stringify(id)} changed`,
        );
        const added = now.slice(was.length);
        if (!created.has(id)) {
          assert.deepEqual(added, [], `a control was created for ${JSON.stringify(id)}`);
          continue;
        }
        assert.equal(added.length, 1, `${JSON.stringify(id)} got ${added.length} controls`);
        assert.equal(added[0]?.type, "SELL_ONLY");
        assert.equal(added[0]?.set_by, "SET_BY_CLIENT");
        assert.equal(added[0]?.deleted_at, undefined);
      }
    }

    before(async () => {
      sandbox = await startSandbox({ port: 0, rateLimitRps: 0, tokenRateLimitRps: 0 });
      craftPlatform(sandbox, CORPUS);
      baseline = controlsById(sandbox);
      target = await backend.target();
      const h = await target.open();
      await sql`create table identities (id text, user_disabled boolean, admin_disabled boolean)`.execute(
        h.db,
      );
      for (const c of CORPUS) {
        for (const r of c.rows) {
          await sql`insert into identities values (${r.id}, ${r.ud}, ${r.ad})`.execute(h.db);
        }
      }
      await sql`create table legacy_text_flags (id text, user_disabled text, admin_disabled text)`.execute(
        h.db,
      );
      for (const { row } of TEXT_FLAG_CASES) {
        await sql`insert into legacy_text_flags values (${row.id}, ${row.ud}, ${row.ad})`.execute(
          h.db,
        );
      }
      await h.close();
      env = {
        API_BASE_URL: sandbox.apiUrl,
        OAUTH_TOKEN_URL: sandbox.tokenUrl,
        OAUTH_CLIENT_ID: sandbox.credentials.clientId,
        OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
      };
    });

    after(async () => {
      await sandbox?.close();
      await target?.drop();
      rmSync(out, { recursive: true, force: true });
    });

    it("the database refuses a NUL character in a text id, so no NUL id can reach the reader", async () => {
      const h = await target.open();
      try {
        await assert.rejects(
          sql`insert into identities values (${"nul\u0000id"}, true, false)`.execute(h.db),
          /0x00|null character|invalid byte sequence/i,
        );
        const n = await sql<{ n: number }>`select count(*)::int as n from identities`.execute(h.db);
        assert.equal(Number(n.rows[0]?.n), CORPUS.flatMap((c) => c.rows).length);
      } finally {
        await h.close();
      }
    });

    it("plan classifies every nasty row and platform state with its finding and reason, and sends no write", async () => {
      const { summary, csv, findings, sourceRows } = await plan("warn-bulk", [
        "--state",
        "bulk",
        "--all",
      ]);
      warnPlan = { summary, sourceRows };
      for (const c of CORPUS) checkCase(c, expectedFindings(c, "warn"), findings, csv, true);
      const expectedTotal = CORPUS.flatMap((c) => expectedFindings(c, "warn")).length;
      assert.equal(findings.length, expectedTotal, "no finding beyond the corpus");
      assert.equal(csv.length, expectedTotal, "diff.csv has one row per finding (with --all)");
      assert.equal(summary.findings.invalid_source_row, invalidRowCount("warn"));
      assert.equal(posts(sandbox), 0);
      assert.equal(sandbox.stats().writes.deletes, 0);
    });

    it("under the default --non-uuid-ids warn, clean non-UUID ids are kept and recorded as non_uuid_id anomalies with their reason", async () => {
      assert.ok(warnPlan, "the warn plan ran");
      const { summary, sourceRows: rows } = warnPlan;
      const warned = CORPUS.filter((c) => c.nonUuidWarning);
      assert.ok(warned.length >= 8);
      for (const c of warned) {
        const row = rows.find((r) => r.identity_id === c.rows[0]!.id);
        assert.ok(row, `${c.key}: no source row kept`);
        assert.equal(row.anomaly, "non_uuid_id", c.key);
        assert.equal(row.valid, true, `${c.key}: a warning keeps the row`);
        assert.match(row.anomaly_detail ?? "", c.nonUuidWarning!, c.key);
      }
      assert.equal(summary.source.anomalies, invalidRowCount("warn") + warned.length);
      assert.equal(posts(sandbox), 0);
    });

    it("diff.csv neutralises spreadsheet-formula ids with a leading apostrophe, and no cell starts a formula", async () => {
      const csv = parseCsv(readFileSync(join(out, "warn-bulk", "diff.csv"), "utf8"));
      for (const cell of [`'=HYPERLINK("http://evil.example","click me")`, "'+1", "'-1", "'@x"]) {
        assert.ok(
          csv.some((r) => r.identity_id === cell && r.finding === "identity_not_found"),
          `no neutralised cell ${cell}`,
        );
      }
      for (const r of csv) {
        for (const [column, value] of Object.entries(r)) {
          assert.doesNotMatch(value, FORMULA_START, `${column} cell ${JSON.stringify(value)}`);
        }
      }
    });

    it("no report file holds a raw control or bidi character: ESC, BEL, DEL and overrides are escaped visibly", async () => {
      const dir = join(out, "warn-bulk");
      const raw = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]|\p{Bidi_Control}/u;
      for (const file of ["diff.csv", "summary.json", "summary.md"]) {
        const text = readFileSync(join(dir, file), "utf8");
        assert.doesNotMatch(text, raw, `${file} holds a raw control or bidi character`);
      }
      const csv = readFileSync(join(dir, "diff.csv"), "utf8");
      assert.ok(csv.includes("esc\\u001b[31mred\\u0007"), "the ESC/BEL id is shown escaped");
      assert.ok(csv.includes("user\\u202efdp.exe"), "the right-to-left override is shown escaped");
    });

    it("under --non-uuid-ids reject, every non-UUID id is an invalid_source_row with its reason", async () => {
      const { summary, csv, findings } = await plan("reject", ["--non-uuid-ids", "reject"]);
      for (const c of CORPUS) checkCase(c, expectedFindings(c, "reject"), findings, csv, false);
      assert.equal(summary.findings.invalid_source_row, invalidRowCount("reject"));
      assert.ok(invalidRowCount("reject") - invalidRowCount("warn") >= 8);
      assert.equal(posts(sandbox), 0);
    });

    it("apply under --non-uuid-ids reject creates controls only for valid UUID rows and sends no POST for an invalid row", async () => {
      const created = createdUnder(["reject"]);
      const r = await cli([
        "apply",
        "--yes",
        "--json",
        "--non-uuid-ids",
        "reject",
        "--state",
        "per-identity",
        "--out",
        join(out, "apply-reject"),
      ]);
      assert.equal(r.code, 0, r.stderr);
      const summary = JSON.parse(r.stdout);
      assert.equal(summary.outcomes["succeeded:created"], created.size);
      assert.equal(posts(sandbox), created.size, "one POST per created control, none other");
      assertControls(baseline, created);
    });

    it("apply under the default warn policy creates controls for known non-UUID ids (quotes and unicode too) and still none for an invalid row", async () => {
      const r = await cli([
        "apply",
        "--yes",
        "--json",
        "--state",
        "per-identity",
        "--out",
        join(out, "apply-warn"),
      ]);
      assert.equal(r.code, 0, r.stderr);
      const summary = JSON.parse(r.stdout);
      const created = createdUnder(["reject", "warn"]);
      const newlyCreated = created.size - createdUnder(["reject"]).size;
      assert.ok(newlyCreated >= 3);
      assert.equal(summary.outcomes["succeeded:created"], newlyCreated);
      assert.equal(posts(sandbox), created.size);
      assertControls(baseline, created);
      const h = await target.open();
      try {
        const n = await sql<{ n: number }>`select count(*)::int as n from identities`.execute(h.db);
        assert.equal(Number(n.rows[0]?.n), CORPUS.flatMap((c) => c.rows).length, "source intact");
      } finally {
        await h.close();
      }
    });

    it("reconcile --prune deletes only the duplicate client control; FROZEN, CLOSED, DORMANT, non-overridable and unknown set_by controls are never touched", async () => {
      const before = controlsById(sandbox);
      const postsBefore = posts(sandbox);
      const r = await cli([
        "reconcile",
        "--yes",
        "--prune",
        "--exit-on",
        "any",
        "--json",
        "--out",
        join(out, "reconcile"),
      ]);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(JSON.parse(r.stdout).outcomes["succeeded:deleted"], 1);
      assert.equal(sandbox.stats().writes.deletes, 1);
      assert.equal(posts(sandbox), postsBefore, "reconcile after apply creates nothing");
      const active = sandbox
        .controlsOf(DUPLICATE_CONTROLS_ID)
        .filter((c) => c.type === "SELL_ONLY" && c.set_by === "CLIENT");
      assert.equal(active.length, 1, "one of the two client controls is kept");
      for (const id of platformIds) {
        if (id === DUPLICATE_CONTROLS_ID) continue;
        assert.deepEqual(sandbox.controlsOf(id, { includeDeleted: true }), before.get(id));
      }
    });

    it("a text flag that is not a boolean is an invalid_source_row naming the value, and ' YES ' reads as true", async () => {
      const { csv, findings } = await plan("text-flags", [
        "--source-relation",
        "legacy_text_flags",
        "--state",
        "per-identity",
      ]);
      for (const t of TEXT_FLAG_CASES) {
        const c: CorpusCase = {
          key: t.key,
          rows: [{ id: t.row.id, ud: null, ad: null }],
          warn: [t.expected],
        };
        checkCase(c, c.warn, findings, csv, false);
      }
      assert.equal(findings.length, TEXT_FLAG_CASES.length);
    });
  });
}
