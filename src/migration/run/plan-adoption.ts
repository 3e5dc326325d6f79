/**
 * apply --plan P: the plan checked (a completed plan, made against this invocation's platform and
 * source relation) and adopted by the new run.
 */
import { copyPlanCreateCandidates } from "../../db/journal/plan-queries.ts";
import { getRun } from "../../db/journal/run-queries.ts";
import { countCandidates } from "../../db/journal/snapshot-queries.ts";
import { UserError } from "../../errors.ts";
import { computeFindings } from "../classify/findings.ts";
import type { SourceCounts } from "../read/source-stage.ts";
import type { PipelineDeps, PipelineOptions } from "./pipeline-context.ts";
import { refusePlanElsewhere } from "./run-world.ts";

/** apply --plan P: P must be a completed plan (checked before the new run names it parent). */
export async function checkPlanRun(
  deps: PipelineDeps,
  options: PipelineOptions,
  planRunId: string,
): Promise<void> {
  const plan = await getRun(deps.handle.db, planRunId);
  if (!plan) {
    throw new UserError(`No plan run "${planRunId}". List runs with: controls-migrate runs`);
  }
  if (plan.mode !== "plan" || plan.status !== "completed") {
    throw new UserError(
      `--plan ${planRunId}: that run is a ${plan.status} ${plan.mode}, not a completed plan.`,
    );
  }
  await refusePlanElsewhere(deps, options, planRunId);
}

/**
 * apply --plan P: the new run takes P's candidates with a create to do and what P knew of them, and
 * journals P's creates; their state is re-read once the apply is confirmed (`executeConfirmed`).
 */
export async function adoptPlan(
  deps: PipelineDeps,
  runId: string,
  planRunId: string,
): Promise<SourceCounts> {
  const db = deps.handle.db;
  await copyPlanCreateCandidates(db, runId, planRunId);
  const plan = await getRun(db, planRunId);
  await computeFindings(db, runId, {
    journalCreates: true,
    journalDeletes: false,
    unlistedHoldNoSellOnly: plan?.strategy === "filtered",
  });
  const candidates = await countCandidates(db, runId);
  deps.logger.info(
    `Loaded ${candidates} identities with a create to do from plan ${planRunId}; their state is re-read once the apply is confirmed, before anything is sent`,
  );
  return { rowsRead: candidates, candidates, anomalies: 0 };
}
