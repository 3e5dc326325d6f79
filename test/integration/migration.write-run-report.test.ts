import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { insertRun } from "../../src/db/run-queries.ts";
import { TOOL_TABLES } from "../../src/db/schema.ts";
import { writeRunReport } from "../../src/migration/report.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";

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

    it("offers delete_with_prune exactly for findings stored as prunable, never re-deriving it", async () => {
      await insertRun(h.db, {
        id: "p1",
        mode: "plan",
        parentRunId: null,
        options: {},
        toolVersion: "t",
      });
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
      const dir = mkdtempSync(join(tmpdir(), "cm-report-"));
      await writeRunReport(h.db, summary("p1"), dir, false);
      const lines = readFileSync(join(dir, "diff.csv"), "utf8").trim().split("\n").slice(1);
      const action = (id: string) => lines.find((l) => l.startsWith(`p1,${id},`))?.split(",")[12];
      assert.equal(action("kept"), "");
      assert.equal(action("pruned"), "delete_with_prune");
    });
  });
}
