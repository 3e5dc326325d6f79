/**
 * A revert's diff.csv rows, from its journal: one per control it deletes (or, dry, would delete)
 * and per pruned control it creates again, as a plan's rows are one per create it would send.
 */
import type { Kysely } from "kysely";
import {
  type RevertDiffRecord,
  revertDiffPage,
} from "../../db/report-queries/revert-diff-queries.ts";
import type { Database } from "../../db/schema.ts";
import type { DiffRow } from "../../reports/csv.ts";

/** The outcome a row shows: what a dry run would do, else what the action came to. */
function revertOutcome(r: RevertDiffRecord): string {
  if (r.status === "skipped" && r.outcome === "dry_run") return `would_${r.action}`;
  return r.outcome ?? r.status;
}

/**
 * One diff row of a revert. `finding` says which run wrote what is undone (`created_by RUN` for a
 * control the revert deletes, `pruned_by RUN` for one it creates again); `observed_control_id` is
 * the control deleted, or the new control created; for a create, `other_active_controls` names the
 * pruned control it stands in for.
 */
export function revertDiffRow(r: RevertDiffRecord, ofRunId: string): DiffRow {
  const del = r.action === "delete";
  return {
    run_id: r.run_id,
    identity_id: r.identity_id,
    user_disabled: r.user_disabled,
    admin_disabled: r.admin_disabled,
    // A revert reads no identity: the platform's legacy fields are not known to it.
    platform_user_disabled: null,
    platform_admin_disabled: null,
    finding: `${del ? "created_by" : "pruned_by"} ${ofRunId}`,
    expected_type: del ? null : r.control_type,
    expected_set_by: del ? null : "CLIENT",
    expected_is_overridable: null,
    observed_control_id: del ? r.control_key : r.result_control_id,
    observed_set_by: null,
    observed_is_overridable: null,
    other_active_controls: del ? null : r.pruned_control_id,
    action: r.action,
    outcome: revertOutcome(r),
    http_status: r.http_status,
    error: r.error,
    attempts: r.attempts,
    at: r.at,
  };
}

/**
 * Streams revert `runId`'s diff rows, in journal order.
 *
 * @example
 *   await writeDiffCsv(path, revertDiffRows(db, revertId, ofRunId));
 */
export async function* revertDiffRows(
  db: Kysely<Database>,
  runId: string,
  ofRunId: string,
): AsyncGenerator<DiffRow> {
  let after = 0;
  for (;;) {
    const page = await revertDiffPage(db, runId, ofRunId, after, 5000);
    if (page.length === 0) return;
    after = page[page.length - 1]?.id ?? after;
    for (const r of page) yield revertDiffRow(r, ofRunId);
  }
}
