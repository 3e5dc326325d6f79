/**
 * Which run a revert reverts and the revert run itself, claimed new (its journal built from the
 * reverted run's) or resumed.
 */
import { countNotFinal } from "../../db/journal/journal-queries.ts";
import {
  countLimited,
  countSuperseded,
  journalRevert,
  reopenLimited,
  revertsOf,
} from "../../db/journal/revert-queries.ts";
import { claimRun, getRun, insertRun, newRunId } from "../../db/journal/run-queries.ts";
import type { Run } from "../../db/schema.ts";
import { UserError } from "../../errors.ts";
import { TOOL_VERSION } from "../../version.ts";
import { type RevertDeps, type RevertOptions, revertResumeCommand } from "./revert-context.ts";

/** The run to revert: a finished apply or reconcile, not yet reverted. */
export async function revertableRun(deps: RevertDeps, ofRunId: string): Promise<Run> {
  const db = deps.handle.db;
  const run = await getRun(db, ofRunId);
  if (!run) throw new UserError(`No run "${ofRunId}". List runs with: controls-migrate runs`);
  if (run.mode === "revert") {
    throw new UserError(
      `Run ${run.id} is itself a revert (of ${run.parent_run_id}): reverting a revert is refused. To restore those controls, run apply or reconcile again.`,
    );
  }
  if (run.mode === "plan") {
    throw new UserError(
      `Run ${run.id} is a plan: it wrote nothing, so there is nothing to revert.`,
    );
  }
  const left = await countNotFinal(db, run.id);
  if (run.status === "running" || left > 0) {
    throw new UserError(
      `Run ${run.id} is still going (${run.status}, ${left} actions not final): finish it first (controls-migrate ${run.mode} --resume ${run.id}) or give it up (controls-migrate discard ${run.id}), then revert it.`,
    );
  }
  const superseded = await countSuperseded(db, run.id);
  if (superseded > 0) {
    throw new UserError(
      `Run ${run.id} did not finish (${run.status}): a later apply or reconcile superseded ${superseded} of its actions and settled the rest, so what it created is now part of what later runs found and counted on; reverting it alone is refused. To lift the restrictions it made, clear the flags in the source and run controls-migrate reconcile --prune, which deletes the tool's own controls no flag calls for.`,
    );
  }
  return run;
}

/** Claims a new revert of run `of` (a second real revert of it is refused). */
export async function claimNewRevert(deps: RevertDeps, o: RevertOptions, of: Run): Promise<string> {
  const db = deps.handle.db;
  if (!o.revert.dryRun) {
    const [earlier] = await revertsOf(db, of.id);
    if (earlier) {
      const limited = earlier.status === "completed" ? await countLimited(db, earlier.id) : 0;
      const resume = revertResumeCommand(of.id, earlier.id);
      throw new UserError(
        earlier.status === "completed" && limited === 0
          ? `Run ${of.id} was already reverted by run ${earlier.id} (finished ${earlier.finished_at?.toISOString() ?? "?"}): a second revert is refused.`
          : `Run ${of.id} already has a revert, ${earlier.id} (${earlier.status}${limited ? `, ${limited} left by --limit` : ""}); continue it with: ${resume}`,
      );
    }
  }
  const id = newRunId();
  await insertRun(db, {
    id,
    mode: "revert",
    parentRunId: of.id,
    dryRun: o.revert.dryRun,
    options: {
      mode: "revert",
      of_run_id: of.id,
      ...o.revert,
      pauseOutside: o.revert.pauseOutside?.text,
      ...(o.platform
        ? {
            api_url: o.platform.apiUrl,
            client_id: o.platform.clientId,
            rate: o.platform.rate,
            concurrency: o.platform.concurrency,
          }
        : {}),
    },
    toolVersion: TOOL_VERSION,
  });
  return id;
}

/**
 * Journals new revert `id`: a delete per control run `ofRunId` created, a create per one it
 * pruned. Called once the read commands are served (a large run's journal takes a while).
 */
export async function journalNewRevert(
  deps: RevertDeps,
  o: RevertOptions,
  id: string,
): Promise<void> {
  const n = await journalRevert(deps.handle.db, id, o.ofRunId);
  deps.logger.info(
    `Run ${id} (revert${o.revert.dryRun ? ", dry run" : ""} of ${o.ofRunId}) started: ${n} writes of ${o.ofRunId} to undo`,
  );
}

/** Claims revert `id` of run `o.ofRunId` again, for `--resume`. */
export async function claimResumedRevert(
  deps: RevertDeps,
  o: RevertOptions,
  id: string,
): Promise<string> {
  const db = deps.handle.db;
  const run = await getRun(db, id);
  if (run?.mode !== "revert" || run.parent_run_id !== o.ofRunId || run.dry_run) {
    throw new UserError(
      `--resume ${id}: that is not a revert of run ${o.ofRunId}. Its reverts are listed by: controls-migrate runs`,
    );
  }
  const limited = await reopenLimited(db, id);
  if (run.status === "completed" && limited === 0) {
    throw new UserError(`--resume ${id}: the revert is completed; nothing to resume.`);
  }
  await claimRun(db, id);
  deps.onRunStarted?.(id); // before the line, so that a JSON log's first line of it has run_id
  deps.logger.info(`Resuming revert ${id} of run ${o.ofRunId}`);
  return id;
}
