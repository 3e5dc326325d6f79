/**
 * One run, one world (issue 51): a run records, when it starts, the source relation its text
 * resolved to (schema-qualified name, object id, database) and the platform's key; a resume and
 * an apply of a plan compare theirs with it and refuse another world, naming both, before
 * anything is read or sent.
 */
import { type RecordedWorld, runWorld, saveRunWorld } from "../../db/journal/run-world-queries.ts";
import { readSourceIdentity, sameDatabase } from "../../db/source/source-identity.ts";
import { UserError } from "../../errors.ts";
import type { PipelineDeps, PipelineOptions } from "./pipeline-context.ts";
import { platformKey, sourceDifference } from "./run-binding.ts";

/** Resolves this invocation's source and platform key and records them with the run. */
export async function recordRunWorld(
  deps: PipelineDeps,
  options: PipelineOptions,
  runId: string,
): Promise<void> {
  const source = await readSourceIdentity(deps.handle, options.source);
  await saveRunWorld(deps.handle.db, runId, { source, platformKey: platformKey(options.platform) });
}

const HINT =
  "A bare --source-relation is found through the search_path (set by the database URL's options, PGOPTIONS or the role's default): point it at the run's relation, or name it schema-qualified.";

/**
 * The differences between a recorded world and this invocation's, one line each (empty: the same
 * world). A run of an older version recorded nothing and is not compared.
 */
async function worldDifferences(
  deps: PipelineDeps,
  options: PipelineOptions,
  recorded: RecordedWorld,
): Promise<string[]> {
  const out: string[] = [];
  const key = platformKey(options.platform);
  if (recorded.platformKey !== null && recorded.platformKey !== key) {
    out.push(`platform: the run's ${recorded.platformKey}, this invocation's ${key}.`);
  }
  if (recorded.source !== null) {
    const now = await readSourceIdentity(deps.handle, options.source);
    const differs = sourceDifference(recorded.source, now, sameDatabase);
    if (differs) out.push(`${differs}. ${HINT}`);
  }
  return out;
}

/**
 * `--resume ID`: refuses when this invocation's source resolves elsewhere than the run's (or its
 * platform is another), naming both.
 */
export async function refuseResumeElsewhere(
  deps: PipelineDeps,
  options: PipelineOptions,
  runId: string,
): Promise<void> {
  const recorded = await runWorld(deps.handle.db, runId);
  if (!recorded) return;
  const differences = await worldDifferences(deps, options, recorded);
  if (differences.length === 0) return;
  throw new UserError(
    `--resume ${runId}: the run is bound to the platform and source it started with, and this invocation points elsewhere: ${differences.join(" ")} Nothing was read or sent; the run stays resumable with its own settings.`,
  );
}

/**
 * `apply --plan P`: refuses a plan made against another platform or another source relation,
 * naming both, before the apply's run exists.
 */
export async function refusePlanElsewhere(
  deps: PipelineDeps,
  options: PipelineOptions,
  planRunId: string,
): Promise<void> {
  const recorded = await runWorld(deps.handle.db, planRunId);
  if (!recorded) return;
  const differences = (await worldDifferences(deps, options, recorded)).map((d) =>
    d.replace("the run's", "the plan's"),
  );
  if (differences.length === 0) return;
  throw new UserError(
    `--plan ${planRunId}: the plan was made against another world than this invocation's: ${differences.join(" ")} Nothing was sent; make a plan here (controls-migrate plan) or apply this one where it was made.`,
  );
}
