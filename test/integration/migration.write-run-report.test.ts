import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { insertRun } from "../../src/db/journal/run-queries.ts";
import { TOOL_TABLES } from "../../src/db/schema.ts";
import { writeRunReport } from "../../src/migration/run/report.ts";
import { DIFF_COLUMNS } from "../../src/reports/csv.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const summary = (runId: string): Omit<RunSummary, "reports"> => ({
  run_id: runId,
  mode: "plan",
  status: "completed",
  started_at: new Date(0).toISOString(),
  finished_at: new Date(1000).toISOString(),
  duration_s: 1,
  strategy: "bulk",
  source: { rows_read: 2, candidates: 0, anomalies: 0 },
  findings: { unexpected_client_control: 2 },
  outcomes: {},
  requests: {},
  throughput: { identities_per_s: 2, actions_per_s: 0 },
  changes: null,
  exit_code: 2,
});

for (const b of backends) {
  describe(`writeRunReport on ${b.name}`, () => {
    let h: TestDatabase;
    before(async () => {
      h = await b.open({ migrate: true });
    });
    after(() => h.close());
    const newRun = (id: string, mode: "plan" | "apply") =>
      insertRun(h.db, { id, mode, parentRunId: null, options: {}, toolVersion: "t" });

    it("offers delete_with_prune exactly for findings stored as prunable, never re-deriving it", async () => {
      await newRun("p1", "plan");
      // Both observed controls look alike (client-set, overridable); only the stored verdict differs.
      const finding = {
        run_id: "p1",
        finding: "unexpected_client_control",
        observed_set_by: "CLIENT",
        observed_is_overridable: true,
      };
      await h.db
        .insertInto(TOOL_TABLES.findings)
        .values([
          { ...finding, identity_id: "kept", prunable: false },
          { ...finding, identity_id: "pruned", prunable: true },
        ])
        .execute();
      const dir = tempDir("cm-report-");
      await writeRunReport(h.db, summary("p1"), dir, false);
      const lines = readFileSync(join(dir, "diff.csv"), "utf8").trim().split("\n").slice(1);
      const action = (id: string) =>
        lines.find((l) => l.startsWith(`p1,${id},`))?.split(",")[DIFF_COLUMNS.indexOf("action")];
      assert.equal(action("kept"), "");
      assert.equal(action("pruned"), "delete_with_prune");
    });

    it("writes each finding once, in order, across the pages it is read in, leaving in_sync out unless asked", async () => {
      await newRun("big", "plan");
      // 12,345 findings, every fifth in_sync: more than two report pages, and on PGlite more than
      // a dozen of the smaller pages it reads them in.
      await sql`
        insert into ${sql.table(TOOL_TABLES.findings)} (run_id, identity_id, finding)
        select 'big', 'id-' || lpad(n::text, 5, '0'),
          case when n % 5 = 0 then 'in_sync' else 'unexpected_client_control' end
        from generate_series(1, 12345) n
      `.execute(h.db);
      const ids = (all: boolean) => {
        const dir = tempDir("cm-report-");
        return writeRunReport(h.db, summary("big"), dir, all).then(() =>
          readFileSync(join(dir, "diff.csv"), "utf8")
            .trim()
            .split("\n")
            .slice(1)
            .map((l) => l.split(",")[1]),
        );
      };
      const expected = (all: boolean) =>
        Array.from({ length: 12345 }, (_, i) => i + 1)
          .filter((n) => all || n % 5 !== 0)
          .map((n) => `id-${String(n).padStart(5, "0")}`);
      assert.deepEqual(await ids(false), expected(false));
      assert.deepEqual(await ids(true), expected(true));
    });

    it("gives a journaled finding its entry: action, outcome, HTTP status, error, attempts and time to the millisecond", async () => {
      await newRun("a1", "apply");
      const [f] = await h.db
        .insertInto(TOOL_TABLES.findings)
        .values({
          run_id: "a1",
          identity_id: "id-é,1",
          finding: "missing_client_control",
          user_disabled: true,
          admin_disabled: false,
          expected_type: "SELL_ONLY",
          expected_set_by: "CLIENT",
          expected_is_overridable: true,
        })
        .returning("id")
        .execute();
      const entry = {
        run_id: "a1",
        identity_id: "id-é,1",
        finding_id: Number(f?.id),
        action: "create" as const,
        control_type: "SELL_ONLY",
        control_key: "SELL_ONLY:client",
        created_at: new Date("2026-11-25T07:00:00.000Z"),
      };
      await h.db
        .insertInto(TOOL_TABLES.actions)
        .values([
          {
            ...entry,
            status: "failed",
            outcome: "gave_up",
            attempts: 3,
            http_status: 503,
            error: 'said "no", twice',
            updated_at: "2026-11-25T07:30:45.123999+00",
          },
        ])
        .execute();
      const dir = tempDir("cm-report-");
      await writeRunReport(h.db, { ...summary("a1"), mode: "apply" }, dir, false);
      const csv = readFileSync(join(dir, "diff.csv"), "utf8").trim().split("\n");
      assert.equal(csv.length, 2, csv.join("\n"));
      assert.equal(
        csv[1],
        'a1,"id-é,1",true,false,,,missing_client_control,SELL_ONLY,CLIENT,true,,,,,create,gave_up,503,"said ""no"", twice",3,2026-11-25T07:30:45.123Z',
      );
    });
  });
}
