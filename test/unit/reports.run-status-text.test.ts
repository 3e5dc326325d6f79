/**
 * `status` names the stage a running run is in, shows actions only once they exist, and counts
 * ambiguous outcomes once (issue 54 §3).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { StatusControl, StatusRun } from "../../src/db/connection/status-query.ts";
import { runStatusView } from "../../src/migration/steer/run-status.ts";
import { renderRunStatus } from "../../src/reports/run-status-text.ts";

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
const none = { pending: 0, in_flight: 0, ambiguous: 0, succeeded: 0, failed: 0, skipped: 0 };
const staged = (stage: string): StatusControl => ({
  // A stage note from a while ago: the stage holds however old it is.
  report: { stage },
  reported_at: null,
  paused: false,
  rate_budget: null,
});

describe("status as text", () => {
  it("names each stage before the writes, with no action counts, rate or ETA, and no flowing writes", () => {
    for (const stage of [
      "reading the source",
      "reading the platform",
      "reading the source and the platform",
      "classifying",
    ]) {
      const text = renderRunStatus(runStatusView(run, none, staged(stage), now));
      assert.match(text, new RegExp(`^Run \\S+: apply, running \\(${stage}\\);`), text);
      assert.match(text, /Actions: none yet/);
      assert.doesNotMatch(text, /0 \/ 0 done|ETA|Writes: flowing/, text);
      assert.match(text, new RegExp(`Writes: none yet \\(the run is ${stage}\\)`));
    }
  });

  it("shows a run that started but noted no stage yet as starting, with no action counts, rate or ETA", () => {
    const text = renderRunStatus(runStatusView(run, none, undefined, now));
    assert.match(text, /^Run \S+: apply, running;/, text);
    assert.match(text, /Actions: none yet/, text);
    assert.doesNotMatch(text, /0 \/ 0 done|ETA|Writes: flowing/, text);
    assert.match(text, /Writes: none yet \(the run is starting\)/, text);
  });

  it("counts the actions journaled while the run still classifies, with no rate, ETA or flowing writes", () => {
    const counts = { ...none, pending: 1681 };
    const text = renderRunStatus(
      runStatusView(run, counts, staged("reading the source and the platform"), now),
    );
    assert.match(text, /Actions: 1681 journaled so far, none sent/, text);
    assert.doesNotMatch(text, /done \(|ETA|Writes: flowing/, text);
    assert.match(text, /Writes: none yet \(the run is reading the source and the platform\)/, text);
  });

  it("shows the actions, rate and ETA once the run writes, and the stage it reports", () => {
    const counts = { ...none, pending: 90, succeeded: 10 };
    const live = {
      rate_per_s: 20,
      rate_budget: 40,
      paused: false,
      held_by: [],
      requests: { rate_limited: 0, retries: 0, ambiguous: 0 },
      stage: "writing",
    };
    const text = renderRunStatus(runStatusView(run, counts, undefined, now, live));
    assert.match(text, /running \(writing\);/);
    assert.match(text, /Actions: 10 \/ 100 done/);
    assert.match(text, /Rate: 20 writes\/s over the last 10 s; budget 40 requests\/s; ETA 5 s\./);
    assert.match(text, /Writes: flowing\./);
  });

  it("shows no write rate once the run reports, whatever its last report said", () => {
    const counts = { ...none, succeeded: 100 };
    const report = {
      rate_per_s: 90,
      rate_budget: 40,
      paused: false,
      held_by: [],
      requests: { rate_limited: 0, retries: 0, ambiguous: 0 },
      stage: "reporting",
    };
    const control: StatusControl = { report, reported_at: now, paused: false, rate_budget: null };
    const view = runStatusView(run, counts, control, now);
    assert.equal(view.rate_per_s, 0);
    assert.match(renderRunStatus(view), /running \(reporting\);[\s\S]*Writes: done/);
  });

  it("counts ambiguous outcomes once, the journal's, after an interrupted run", () => {
    const counts = { ...none, pending: 5, ambiguous: 1, succeeded: 4 };
    const report = {
      rate_per_s: 0,
      rate_budget: 40,
      paused: false,
      held_by: [],
      requests: { rate_limited: 0, retries: 0, ambiguous: 0 },
    };
    const control: StatusControl = { report, reported_at: now, paused: false, rate_budget: null };
    const text = renderRunStatus(
      runStatusView({ ...run, status: "interrupted" }, counts, control, now),
    );
    assert.equal(text.match(/ambiguous/g)?.length, 1, text);
    assert.match(text, /1 ambiguous\./);
    assert.doesNotMatch(text, /\(writing\)|\(reading/, "a stopped run names no stage");
  });
});
