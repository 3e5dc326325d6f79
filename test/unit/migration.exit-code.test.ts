import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ExitCode } from "../../src/errors.ts";
import { FINDING_KINDS } from "../../src/migration/classify/classify.ts";
import {
  closingStatus,
  exitCodeFor,
  isClientWork,
  type RunTally,
  readOutage,
} from "../../src/migration/run/exit-code.ts";
import { type RunFigures, tallyOf } from "../../src/migration/run/run-summary.ts";

const tally = (over: Partial<RunTally>): RunTally => ({
  mode: "apply",
  interrupted: false,
  reportableFindings: 0,
  succeededActions: 0,
  failedActions: 0,
  unsettledActions: 0,
  ...over,
});

describe("isClientWork", () => {
  it("counts awaiting_platform_migration as the platform's work and every three-way finding else as the client's", () => {
    assert.equal(isClientWork("awaiting_platform_migration"), false);
    assert.equal(isClientWork("in_sync"), false);
    const client = FINDING_KINDS.filter(isClientWork);
    assert.ok(client.length > 0);
    for (const k of [
      "platform_will_restrict",
      "duplicate_client_control",
      "platform_unaware_of_admin_flag",
      "source_behind_platform",
      "missing_client_control",
    ]) {
      assert.ok(client.includes(k as (typeof FINDING_KINDS)[number]), k);
    }
  });
});

describe("tallyOf with three-way findings", () => {
  const figures = (findings: Record<string, number>, awaitingCreated = 0) =>
    ({
      findings,
      outcomes: {},
      actions: {
        pending: 0,
        in_flight: 0,
        succeeded: awaitingCreated,
        failed: 0,
        ambiguous: 0,
        verified: 0,
        skipped: 0,
      } as never,
      byFinding: awaitingCreated
        ? [
            {
              finding: "awaiting_platform_migration",
              status: "succeeded",
              outcome: "created",
              n: awaitingCreated,
            },
          ]
        : [],
    }) as RunFigures;

  it("gives a reconcile 0 when awaiting_platform_migration is the only finding left", () => {
    const t = tallyOf("reconcile", false, figures({ in_sync: 4, awaiting_platform_migration: 7 }));
    assert.equal(t.reportableFindings, 0);
    assert.equal(exitCodeFor(t), ExitCode.ok);
  });

  it("gives a reconcile --exit-on any 2 when awaiting_platform_migration is the only finding left", () => {
    const t = tallyOf("reconcile", false, figures({ in_sync: 4, awaiting_platform_migration: 1 }));
    assert.equal(exitCodeFor({ ...t, exitOn: "any" }), ExitCode.findings);
    const created = tallyOf("reconcile", false, figures({ awaiting_platform_migration: 2 }, 2));
    assert.equal(exitCodeFor({ ...created, exitOn: "any" }), ExitCode.ok);
  });

  it("gives a reconcile 2 when a platform_will_restrict is left beside awaiting ones whose creates succeeded", () => {
    const t = tallyOf(
      "reconcile",
      false,
      figures({ awaiting_platform_migration: 3, platform_will_restrict: 1 }, 3),
    );
    assert.deepEqual([t.reportableFindings, t.succeededActions], [1, 0]);
    assert.equal(exitCodeFor(t), ExitCode.findings);
  });
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

  it("gives reconcile --exit-on any 2 when only an awaiting_platform_migration is left, which the default ignores", () => {
    const awaiting = { mode: "reconcile", reportableFindings: 0, clientWorkLeft: 0 } as const;
    assert.equal(
      exitCodeFor(tally({ ...awaiting, exitOn: "any", anyFindingsLeft: 1 })),
      ExitCode.findings,
    );
    assert.equal(exitCodeFor(tally(awaiting)), ExitCode.ok);
  });

  it("counts every finding but in_sync, less the succeeded actions, as left for --exit-on any", () => {
    const figures = {
      findings: { in_sync: 5, awaiting_platform_migration: 1, missing_client_control: 2 },
      byFinding: [
        { finding: "missing_client_control", status: "succeeded", outcome: "created", n: 2 },
      ],
      outcomes: { "succeeded:created": 2 },
      actions: { succeeded: 2, failed: 0, pending: 0, in_flight: 0, ambiguous: 0 },
    } as unknown as RunFigures;
    const t = tallyOf("reconcile", false, figures);
    assert.equal(t.anyFindingsLeft, 1);
    assert.equal(t.reportableFindings, 2);
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

describe("read failures", () => {
  it("gives plan, apply and reconcile 3 when a candidate's state could not be read, under any --exit-on", () => {
    for (const mode of ["plan", "apply", "reconcile"] as const) {
      assert.equal(exitCodeFor(tally({ mode, readFailed: 1 })), ExitCode.actionsFailed, mode);
    }
    const quiet = tally({ mode: "reconcile", exitOn: "changes", readFailed: 2 });
    assert.equal(exitCodeFor(quiet), ExitCode.actionsFailed);
    assert.equal(exitCodeFor({ ...quiet, interrupted: true }), ExitCode.interrupted);
  });

  it("names a read outage only when no candidate was read and some read failed, with its cause", () => {
    assert.equal(readOutage({ candidates: 12, read: 1, readFailed: 11 }, "x"), null);
    assert.equal(readOutage({ candidates: 0, read: 0, readFailed: 0 }, null), null);
    assert.equal(readOutage({ candidates: 3, read: 0, readFailed: 0 }, null), null);
    assert.match(
      readOutage({ candidates: 12, read: 0, readFailed: 12 }, "POST /oauth2/token: 503") ?? "",
      /none of the 12 candidates could be read \(POST \/oauth2\/token: 503\)/,
    );
  });
});

describe("closingStatus", () => {
  it("closes a run with actions in doubt as failed, so that the next apply points at it", () => {
    assert.equal(closingStatus(tally({ unsettledActions: 2 })), "failed");
    assert.equal(closingStatus(tally({ failedActions: 2 })), "completed");
    assert.equal(closingStatus(tally({ interrupted: true, unsettledActions: 2 })), "interrupted");
  });
});
