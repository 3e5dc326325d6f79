import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type RunListing, renderRunsTable, shownStatus } from "../../src/reports/runs-table.ts";

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
    assert.match(header!, /^RUN +MODE +STATUS +EXIT +STARTED \(UTC\) +ERROR +COUNTS$/);
    assert.match(b!, /POST \/oauth2\/token: 401 invalid_client +in_sync=3$/);
    for (const name of ["MODE", "STATUS", "EXIT", "ERROR"]) {
      const at = header!.indexOf(name);
      assert.equal(a![at - 1], " ");
      assert.equal(b![at - 1], " ");
      assert.notEqual(a![at], " ", `${name} column of row 1`);
      assert.notEqual(b![at], " ", `${name} column of row 2`);
    }
  });
});
