/**
 * What re-reading pending actions needs from the journal: the stale ones with the source flags
 * their finding recorded (the diff rules judge the fresh controls against them), and marking the
 * ones a complete listing settled as read now. Staleness is measured on the server's clock, the
 * one every `updated_at` is written with.
 */
import { type Kysely, sql } from "kysely";
import { type Action, type Database, TOOL_TABLES } from "../schema.ts";

/** A pending action with the flags of the finding behind it (null: no finding, or no valid row). */
export interface StaleAction extends Action {
  readonly user_disabled: boolean | null;
  readonly admin_disabled: boolean | null;
}

/**
 * Pending actions of a run last read before `since`, in id order after `afterId` (keyset), with
 * their finding's flags; restricted to some identities when `identityIds` is given.
 *
 * @example
 *   const page = await stalePendingWithFlags(db, runId, since, 0, 500);
 *   const ofPage = await stalePendingWithFlags(db, runId, since, 0, 5000, listedIds);
 */
export function stalePendingWithFlags(
  db: Kysely<Database>,
  runId: string,
  since: Date,
  afterId: number,
  limit: number,
  identityIds?: readonly string[],
): Promise<StaleAction[]> {
  return pendingWithFlags(db, { runId, since, by: "updated_at" }, afterId, limit, identityIds);
}

/**
 * Pending actions of a run decided before `since` (`created_at`: journaled by an earlier process,
 * whatever brought them back to pending since, an in-doubt verification included), in id order
 * after `afterId`, with their finding's flags: those whose source row is re-read before a send.
 *
 * @example
 *   const page = await decidedPendingWithFlags(db, runId, processStart, 0, 500);
 */
export function decidedPendingWithFlags(
  db: Kysely<Database>,
  runId: string,
  since: Date,
  afterId: number,
  limit: number,
  identityIds?: readonly string[],
): Promise<StaleAction[]> {
  return pendingWithFlags(db, { runId, since, by: "created_at" }, afterId, limit, identityIds);
}

async function pendingWithFlags(
  db: Kysely<Database>,
  of: { readonly runId: string; readonly since: Date; readonly by: "updated_at" | "created_at" },
  afterId: number,
  limit: number,
  identityIds?: readonly string[],
): Promise<StaleAction[]> {
  const { runId, since } = of;
  if (identityIds && identityIds.length === 0) return [];
  const r = await sql<StaleAction>`
    select a.*, f.user_disabled, f.admin_disabled
    from ${sql.table(TOOL_TABLES.actions)} a
    left join ${sql.table(TOOL_TABLES.findings)} f on f.id = a.finding_id
    where a.run_id = ${runId} and a.status = 'pending' and ${sql.ref(`a.${of.by}`)} < ${since}
      and a.id > ${afterId}
      ${identityIds ? sql`and a.identity_id = any(${[...identityIds]}::text[])` : sql``}
    order by a.id limit ${limit}
  `.execute(db);
  return r.rows.map((a) => ({ ...a, id: Number(a.id), finding_id: numOrNull(a.finding_id) }));
}

const numOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/**
 * Marks every pending `action` of a run last read before `since` as read now, in one statement:
 * what a complete listing left as it was. Returns how many.
 *
 * @example
 *   await touchStalePending(db, runId, since, "create"); // the listing saw no SELL_ONLY on them
 */
export async function touchStalePending(
  db: Kysely<Database>,
  runId: string,
  since: Date,
  action: "create" | "delete",
): Promise<number> {
  const r = await db
    .updateTable(TOOL_TABLES.actions)
    .set({ updated_at: sql`now()` })
    .where("run_id", "=", runId)
    .where("status", "=", "pending")
    .where("action", "=", action)
    .where("updated_at", "<", since)
    .executeTakeFirst();
  return Number(r.numUpdatedRows ?? 0);
}
