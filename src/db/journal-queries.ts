import { type Kysely, sql } from "kysely";
import {
  type Action,
  type ActionStatus,
  type ActionUpdate,
  type Database,
  type NewAction,
  TOOL_TABLES,
} from "./schema.ts";

const T = TOOL_TABLES.actions;

/** Inserts actions; a repeat of the same (run, identity, action, control) is ignored. */
export async function insertActions(db: Kysely<Database>, rows: NewAction[]): Promise<number> {
  if (rows.length === 0) return 0;
  const r = await db
    .insertInto(T)
    .values(rows)
    .onConflict((oc) => oc.columns(["run_id", "identity_id", "action", "control_key"]).doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0);
}

/** Actions of a run in the given states, in id order after `afterId` (keyset, constant memory). */
export async function actionsPage(
  db: Kysely<Database>,
  runId: string,
  statuses: ActionStatus[],
  afterId: number,
  limit: number,
): Promise<Action[]> {
  return db
    .selectFrom(T)
    .selectAll()
    .where("run_id", "=", runId)
    .where("status", "in", statuses)
    .where("id", ">", afterId)
    .orderBy("id")
    .limit(limit)
    .execute();
}

export async function updateAction(
  db: Kysely<Database>,
  id: number,
  patch: ActionUpdate,
): Promise<void> {
  await db
    .updateTable(T)
    .set({ ...patch, updated_at: new Date() })
    .where("id", "=", id)
    .execute();
}

/** Marks an action in_flight and counts the attempt; committed before the request is sent. */
export async function markInFlight(db: Kysely<Database>, id: number): Promise<void> {
  await db
    .updateTable(T)
    .set({ status: "in_flight", attempts: sql`attempts + 1`, updated_at: new Date() })
    .where("id", "=", id)
    .execute();
}

export async function countActionsByStatus(
  db: Kysely<Database>,
  runId: string,
): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom(T)
    .select(["status", "outcome", db.fn.countAll<number>().as("n")])
    .where("run_id", "=", runId)
    .groupBy(["status", "outcome"])
    .execute();
  const out: Record<string, number> = {};
  for (const r of rows) {
    const key = r.outcome ? `${r.status}:${r.outcome}` : r.status;
    out[key] = (out[key] ?? 0) + Number(r.n);
  }
  return out;
}

/** Actions of a run per status, every status present (0 when none). */
export async function countActionsPerStatus(
  db: Kysely<Database>,
  runId: string,
): Promise<Record<ActionStatus, number>> {
  const rows = await db
    .selectFrom(T)
    .select(["status", db.fn.countAll<number>().as("n")])
    .where("run_id", "=", runId)
    .groupBy("status")
    .execute();
  const out: Record<ActionStatus, number> = {
    pending: 0,
    in_flight: 0,
    succeeded: 0,
    failed: 0,
    ambiguous: 0,
    skipped: 0,
  };
  for (const r of rows) out[r.status] += Number(r.n);
  return out;
}

/** Pending creates and deletes of a run: what a writer asks confirmation for. */
export async function countPendingByAction(
  db: Kysely<Database>,
  runId: string,
): Promise<{ creates: number; deletes: number }> {
  const rows = await db
    .selectFrom(T)
    .select(["action", db.fn.countAll<number>().as("n")])
    .where("run_id", "=", runId)
    .where("status", "=", "pending")
    .groupBy("action")
    .execute();
  const n = (action: string) => Number(rows.find((r) => r.action === action)?.n ?? 0);
  return { creates: n("create"), deletes: n("delete") };
}

export async function countNotFinal(db: Kysely<Database>, runId: string): Promise<number> {
  const r = await db
    .selectFrom(T)
    .select(db.fn.countAll<number>().as("n"))
    .where("run_id", "=", runId)
    .where("status", "in", ["pending", "in_flight", "ambiguous"])
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Leftover pending actions of a run become skipped with the given outcome (canary --limit, superseded). */
export async function skipPending(
  db: Kysely<Database>,
  runId: string,
  outcome: string,
): Promise<number> {
  const r = await db
    .updateTable(T)
    .set({ status: "skipped", outcome, updated_at: new Date() })
    .where("run_id", "=", runId)
    .where("status", "=", "pending")
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** Identities the tool created controls for in any earlier run, and are not in this run's source rows. */
export async function journalIdentitiesOutsideSource(
  db: Kysely<Database>,
  runId: string,
): Promise<string[]> {
  const rows = await db
    .selectFrom(`${T} as a`)
    .select("a.identity_id")
    .distinct()
    .where("a.action", "=", "create")
    .where("a.status", "=", "succeeded")
    .where("a.run_id", "<>", runId)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom(`${TOOL_TABLES.sourceRows} as s`)
            .select(sql`1`.as("one"))
            .where("s.run_id", "=", runId)
            .whereRef("s.identity_id", "=", "a.identity_id"),
        ),
      ),
    )
    .execute();
  return rows.map((r) => r.identity_id);
}
