/**
 * `status`'s rate is the measured one, never above the budget in force (issue 29 §6).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { StatusControl, StatusRun } from "../../src/db/connection/status-query.ts";
import { runStatusView, shownRate } from "../../src/migration/steer/run-status.ts";

const now = new Date("2026-01-01T00:01:00Z");
const run: StatusRun = {
  id: "20260101-000000-abcd",
  mode: "apply",
  status: "running",
  dry_run: false,
  pid: 1,
  host: "h",
  started_at: new Date("2026-01-01T00:00:00Z"),
  heartbeat_at: now,
  options: { rate: 40 },
};
const counts = { pending: 900, in_flight: 0, ambiguous: 0, succeeded: 100, failed: 0, skipped: 0 };
const report = (rate_per_s: number, rate_budget: number) => ({
  rate_per_s,
  rate_budget,
  paused: false,
  held_by: [],
  requests: { rate_limited: 0, retries: 0, ambiguous: 0 },
});

describe("the rate status shows", () => {
  it("is the measured rate while it is under the budget, and the budget when the minute's average runs above it", () => {
    assert.equal(shownRate(12.3, 40), 12.3);
    assert.equal(shownRate(49, 40), 40);
    assert.equal(shownRate(40, 40), 40);
  });

  it("is the measured rate when no budget is known, and never negative", () => {
    assert.equal(shownRate(7, 0), 7);
    assert.equal(shownRate(-1, 40), 0);
  });

  it("is capped by the budget the running process reports, after a set-rate lowered it, and the ETA follows the capped rate", () => {
    const v = runStatusView(run, counts, undefined, now, report(49, 4));
    assert.equal(v.rate_budget, 4);
    assert.equal(v.rate_per_s, 4);
    assert.equal(v.eta_s, 900 / 4);
  });

  it("is capped by the control row's budget when the process's report is read from the database", () => {
    const control: StatusControl = {
      report: report(49, 40),
      reported_at: now,
      paused: false,
      rate_budget: 40,
    };
    const v = runStatusView(run, counts, control, now);
    assert.equal(v.rate_per_s, 40);
    assert.equal(v.rate_budget, 40);
  });
});
