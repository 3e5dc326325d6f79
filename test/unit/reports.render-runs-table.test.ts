import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  countCells,
  type RunListing,
  renderRunsTable,
  shownExitCode,
  shownStatus,
} from "../../src/reports/runs-table.ts";

const now = new Date("2026-11-22T12:00:00Z");
const run = (over: Partial<RunListing>): RunListing => ({
  id: "20261122-115900-ab12",
  mode: "apply",
  status: "running",
  exit_code: null,
  started_at: new Date("2026-11-22T11:59:00Z"),
  heartbeat_at: new Date("2026-11-22T11:59:55Z"),
  error: null,
  counts: {},
  ...over,
});

describe("the runs listing", () => {
  it("calls a running run stale once its heartbeat is more than a minute old", () => {
    assert.equal(shownStatus(run({}), now), "running");
    const silent = run({ heartbeat_at: new Date("2026-11-22T11:58:30Z") });
    assert.equal(shownStatus(silent, now), "stale (process gone?)");
    assert.equal(shownStatus(run({ status: "failed", heartbeat_at: null }), now), "failed");
  });

  it("has a header row, an error column on one line, and aligned columns", () => {
    const text = renderRunsTable(
      [
        run({}),
        run({
          id: "20261122-100000-cd34",
          mode: "plan",
          status: "failed",
          exit_code: 1,
          error: "POST /oauth2/token: 401\ninvalid_client",
          counts: { in_sync: 3, missing_client_control: 0 },
        }),
      ],
      now,
    );
    const [header, a, b] = text.split("\n");
    assert.match(header!, /^RUN +MODE +STATUS +EXIT +STARTED \(UTC\) +ERROR +FINDINGS +OUTCOMES$/);
    assert.match(b!, /POST \/oauth2\/token: 401 invalid_client +in_sync=3 +-$/);
    for (const name of ["MODE", "STATUS", "EXIT", "ERROR"]) {
      const at = header!.indexOf(name);
      assert.equal(a![at - 1], " ");
      assert.equal(b![at - 1], " ");
      assert.notEqual(a![at], " ", `${name} column of row 1`);
      assert.notEqual(b![at], " ", `${name} column of row 2`);
    }
  });
});

describe("the runs listing's counts", () => {
  it("puts findings and outcomes in separate cells, findings in the given order and outcomes by name, whatever order the counts came in", () => {
    const order = ["in_sync", "missing_client_control", "unexpected_client_control"];
    const a = countCells(
      {
        "succeeded:deleted": 1,
        unexpected_client_control: 1,
        in_sync: 4,
        "failed:identity_not_found": 2,
        missing_client_control: 3,
        "succeeded:created": 3,
      },
      order,
    );
    const b = countCells(
      {
        missing_client_control: 3,
        "succeeded:created": 3,
        in_sync: 4,
        "failed:identity_not_found": 2,
        unexpected_client_control: 1,
        "succeeded:deleted": 1,
      },
      order,
    );
    const want = [
      "in_sync=4 missing_client_control=3 unexpected_client_control=1",
      "failed:identity_not_found=2 succeeded:created=3 succeeded:deleted=1",
    ];
    assert.deepEqual(a, want);
    assert.deepEqual(b, want);
  });

  it("shows - for a run with no finding or no outcome, and leaves zeros out", () => {
    assert.deepEqual(countCells({ in_sync: 0, "succeeded:created": 2 }, []), [
      "-",
      "succeeded:created=2",
    ]);
    assert.deepEqual(countCells(null, []), ["-", "-"]);
  });

  it("puts the counts of actions without an outcome (pending, ambiguous) with the outcomes, not the findings", () => {
    assert.deepEqual(countCells({ missing_client_control: 3, ambiguous: 1, pending: 2 }, []), [
      "missing_client_control=3",
      "ambiguous=1 pending=2",
    ]);
  });
});

describe("the runs listing's exit codes", () => {
  it("shows 130 for an interrupted run no process closed, and the recorded code otherwise", () => {
    assert.equal(shownExitCode(run({ status: "interrupted", exit_code: null })), 130);
    assert.equal(shownExitCode(run({ status: "failed", exit_code: 1 })), 1);
    assert.equal(shownExitCode(run({ status: "running", exit_code: null })), null);
    const text = renderRunsTable([run({ status: "interrupted", exit_code: null })], now);
    assert.match(text.split("\n")[1] ?? "", /^\S+ +apply +interrupted +130 /);
  });
});
