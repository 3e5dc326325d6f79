/**
 * A revert's diff rows: one per journaled undo (a delete of a control the reverted run created, a
 * create of a control it pruned), with the identity's flags as the reverted run read them.
 */
import { type Kysely, sql } from "kysely";
import { type Database, TOOL_TABLES } from "../schema.ts";

const A = TOOL_TABLES.actions;
const F = TOOL_TABLES.findings;

/** One undo of a revert run, with what the reverted run knew of its identity. */
export interface RevertDiffRecord {
  readonly id: number;
  readonly run_id: string;
  readonly identity_id: string;
  readonly user_disabled: boolean | null;
  readonly admin_disabled: boolean | null;
  readonly action: "create" | "delete";
  readonly control_type: string;
  /** The control to delete, or `SELL_ONLY:client` for a create. */
  readonly control_key: string;
  /** For a create: the id of the control the reverted run deleted. */
  readonly pruned_control_id: string | null;
  readonly status: string;
  readonly outcome: string | null;
  readonly http_status: number | null;
  readonly error: string | null;
  readonly attempts: number;
  readonly result_control_id: string | null;
  readonly at: Date | null;
}

/**
 * One page of revert `revertRunId`'s actions, keyset by action id. Each row is matched with the
 * reverted run's own write (the create of the control, or the delete of the pruned one) and that
 * write's finding, whose flags are the identity's as the reverted run read them.
 *
 * @example
 *   const page = await revertDiffPage(db, revertId, ofRunId, 0, 5000);
 */
export async function revertDiffPage(
  db: Kysely<Database>,
  revertRunId: string,
  ofRunId: string,
  afterId: number,
  limit: number,
): Promise<RevertDiffRecord[]> {
  const r = await sql<RevertDiffRecord>`
    select r.id, r.run_id, r.identity_id, f.user_disabled, f.admin_disabled, r.action,
      r.control_type, r.control_key, o.pruned_control_id, r.status, r.outcome, r.http_status,
      r.error, r.attempts, r.result_control_id, r.updated_at as at
    from ${sql.table(A)} r
    left join lateral (
      select w.finding_id, case when w.action = 'delete' then w.control_key end as pruned_control_id
      from ${sql.table(A)} w
      where w.identity_id = r.identity_id and w.run_id = ${ofRunId} and w.status = 'succeeded'
        and ((r.action = 'delete' and w.action = 'create' and w.result_control_id = r.control_key)
          or (r.action = 'create' and w.action = 'delete' and w.outcome = 'deleted'))
      order by w.id desc limit 1
    ) o on true
    left join ${sql.table(F)} f on f.id = o.finding_id
    where r.run_id = ${revertRunId} and r.id > ${afterId}
    order by r.id limit ${limit}`.execute(db);
  return r.rows.map((x) => ({
    ...x,
    id: Number(x.id),
    attempts: Number(x.attempts),
    at: x.at === null ? null : new Date(x.at),
  }));
}

/**
 * How many controls a revert deletes and creates (or, dry, would), whatever their outcome.
 *
 * @example
 *   const { deletes, creates } = await countRevertWrites(db, revertId);
 */
export async function countRevertWrites(
  db: Kysely<Database>,
  revertRunId: string,
): Promise<{ deletes: number; creates: number }> {
  const rows = await db
    .selectFrom(A)
    .select(["action", (eb) => eb.fn.countAll<string>().as("n")])
    .where("run_id", "=", revertRunId)
    .groupBy("action")
    .execute();
  const n = (k: string) => Number(rows.find((x) => x.action === k)?.n ?? 0);
  return { deletes: n("delete"), creates: n("create") };
}
