import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ExitCode } from "../../src/errors.ts";
import { closingStatus, exitCodeFor, type RunTally } from "../../src/migration/exit-code.ts";

const tally = (over: Partial<RunTally>): RunTally => ({
  mode: "apply",
  interrupted: false,
  reportableFindings: 0,
  succeededActions: 0,
  failedActions: 0,
  unsettledActions: 0,
  ...over,
});

describe("exitCodeFor", () => {
  it("gives 130 to an interrupted run whatever else it counted", () => {
    for (const mode of ["plan", "apply", "reconcile"] as const) {
      const t = tally({ mode, interrupted: true, failedActions: 3, reportableFindings: 9 });
      assert.equal(exitCodeFor(t), ExitCode.interrupted);
    }
  });

  it("gives a plan 2 when it has anything to act on or report, else 0", () => {
    assert.equal(exitCodeFor(tally({ mode: "plan", reportableFindings: 1 })), ExitCode.findings);
    assert.equal(exitCodeFor(tally({ mode: "plan" })), ExitCode.ok);
  });

  it("gives a writer 3 when an action failed or is still unsettled", () => {
    for (const mode of ["apply", "reconcile"] as const) {
      assert.equal(exitCodeFor(tally({ mode, failedActions: 1 })), ExitCode.actionsFailed);
      assert.equal(exitCodeFor(tally({ mode, unsettledActions: 1 })), ExitCode.actionsFailed);
    }
  });

  it("gives apply 0 once every action succeeded, even with report-only findings left", () => {
    const t = tally({ reportableFindings: 5, succeededActions: 3 });
    assert.equal(exitCodeFor(t), ExitCode.ok);
  });

  it("gives reconcile --exit-on any 2 only for findings its own succeeded actions did not resolve", () => {
    const any = { mode: "reconcile", exitOn: "any" } as const;
    const done = tally({ ...any, reportableFindings: 3, succeededActions: 3 });
    assert.equal(exitCodeFor(done), ExitCode.ok);
    const left = tally({ ...any, reportableFindings: 4, succeededActions: 3 });
    assert.equal(exitCodeFor(left), ExitCode.findings);
  });

  it("gives reconcile 0 by default (--exit-on client) when only platform-owned findings are left, 2 when client work is left", () => {
    const platformOnly = tally({ mode: "reconcile", reportableFindings: 4, clientWorkLeft: 0 });
    assert.equal(exitCodeFor(platformOnly), ExitCode.ok);
    const client = tally({ mode: "reconcile", reportableFindings: 4, clientWorkLeft: 1 });
    assert.equal(exitCodeFor(client), ExitCode.findings);
    assert.equal(exitCodeFor({ ...client, exitOn: "client" }), ExitCode.findings);
  });

  it("gives reconcile --exit-on changes 2 only for outside changes or new client work, whatever is left", () => {
    const changes = { mode: "reconcile", exitOn: "changes", reportableFindings: 9 } as const;
    const quiet = tally({ ...changes, clientWorkLeft: 5, outsideChanges: 0, newClientWork: 0 });
    assert.equal(exitCodeFor(quiet), ExitCode.ok);
    assert.equal(exitCodeFor({ ...quiet, outsideChanges: 1 }), ExitCode.findings);
    assert.equal(exitCodeFor({ ...quiet, newClientWork: 1 }), ExitCode.findings);
    assert.equal(exitCodeFor({ ...quiet, failedActions: 1 }), ExitCode.actionsFailed);
  });
});

describe("closingStatus", () => {
  it("closes a run with actions in doubt as failed, so that the next apply points at it", () => {
    assert.equal(closingStatus(tally({ unsettledActions: 2 })), "failed");
    assert.equal(closingStatus(tally({ failedActions: 2 })), "completed");
    assert.equal(closingStatus(tally({ interrupted: true, unsettledActions: 2 })), "interrupted");
  });
});
