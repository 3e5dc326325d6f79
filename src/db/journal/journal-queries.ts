/**
 * The actions journal: one row per intended platform write, from `pending` through `in_flight`
 * (committed before the request) to its outcome. Every `updated_at` is the database server's
 * clock, never a client's: runs on several hosts compare them (see `stalePendingWithFlags` in reverify-queries.ts).
 */
import { type Kysely, sql } from "kysely";
import {
  type Action,
  type ActionStatus,
  type ActionUpdate,
  type Database,
  TOOL_TABLES,
} from "../schema.ts";
import { journalWrite } from "./journal-writes.ts";

const T = TOOL_TABLES.actions;
const serverNow = () => sql<Date>`now()`;

/**
 * Whether a run journaled any action (a plan never does).
 *
 * @example
 *   if (!(await runHasActions(db, runId))) ...
 */
export async function runHasActions(db: Kysely<Database>, runId: string): Promise<boolean> {
  const r = await db.selectFrom(T).select("id").where("run_id", "=", runId).limit(1).execute();
  return r.length > 0;
}

/**
 * Actions of a run in the given states, in id order after `afterId` (keyset, constant memory).
 *
 * @example
 *   const page = await actionsPage(db, runId, ["pending"], 0, 500);
 */
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

/**
 * Sets fields of one action (its status, outcome, error...) and stamps it with the server's time.
 * Idempotent: the same patch applied twice leaves the same row.
 *
 * @example
 *   await updateAction(db, a.id, { status: "succeeded", outcome: "created", result_control_id: id });
 */
export async function updateAction(
  db: Kysely<Database>,
  id: number,
  patch: ActionUpdate,
): Promise<void> {
  await journalWrite(db, { kind: "patch", id, patch });
}

/**
 * Marks an action in_flight and counts the attempt; committed before the request is sent. (Sent
 * again after a lost connection, the attempt may be counted twice; the journal's state is right.)
 *
 * @example
 *   await markInFlight(db, a.id); // then send the create
 */
export async function markInFlight(db: Kysely<Database>, id: number): Promise<void> {
  await journalWrite(db, { kind: "in_flight", id });
}

/**
 * Pending actions marked as re-read now: their knowledge is fresh again.
 *
 * @example
 *   await touchActions(db, [12, 13]);
 */
export async function touchActions(db: Kysely<Database>, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable(T)
    .set({ updated_at: serverNow() })
    .where("id", "in", [...ids])
    .execute();
}

/**
 * Action counts of a run by `status:outcome` (or `status` when there is no outcome).
 *
 * @example
 *   await countActionsByStatus(db, runId) // { "succeeded:created": 12, pending: 3 }
 */
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

/**
 * Pending creates and deletes of a run: what a writer asks confirmation for.
 *
 * @example
 *   const { creates, deletes } = await countPendingByAction(db, runId);
 */
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

/**
 * Actions of a run that are not final yet (pending, in_flight or ambiguous).
 *
 * @example
 *   if ((await countNotFinal(db, runId)) > 0) status = "failed";
 */
export async function countNotFinal(db: Kysely<Database>, runId: string): Promise<number> {
  const r = await db
    .selectFrom(T)
    .select(db.fn.countAll<number>().as("n"))
    .where("run_id", "=", runId)
    .where("status", "in", ["pending", "in_flight", "ambiguous"])
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/**
 * Leftover pending actions of a run become skipped with the given outcome (canary --limit,
 * superseded).
 *
 * @example
 *   await skipPending(db, runId, "not_run_limit");
 */
export async function skipPending(
  db: Kysely<Database>,
  runId: string,
  outcome: string,
): Promise<number> {
  const r = await db
    .updateTable(T)
    .set({ status: "skipped", outcome, updated_at: serverNow() })
    .where("run_id", "=", runId)
    .where("status", "=", "pending")
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/**
 * Identities the tool created controls for in any earlier run, and are not in this run's source
 * rows.
 *
 * @example
 *   const earlier = await journalIdentitiesOutsideSource(db, runId);
 */
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

/**
 * The server's time `seconds` ago: with `process.uptime()`, when this process started, on the
 * clock every `updated_at` is written with.
 *
 * @example
 *   const since = await serverTimeAgo(db, process.uptime());
 */
export async function serverTimeAgo(db: Kysely<Database>, seconds: number): Promise<Date> {
  const r = await sql<{ at: Date }>`select now() - make_interval(secs => ${seconds}) as at`.execute(
    db,
  );
  return new Date(r.rows[0]!.at);
}

/**
 * How many pending actions of a run, and behind how many identities, were last read before
 * `since` (`by` `created_at`: decided before it): what a resumed run must re-read before sending
 * them.
 *
 * @example
 *   const { actions, identities } = await countStalePending(db, runId, since);
 */
export async function countStalePending(
  db: Kysely<Database>,
  runId: string,
  since: Date,
  by: "updated_at" | "created_at" = "updated_at",
): Promise<{ actions: number; identities: number }> {
  const r = await db
    .selectFrom(T)
    .select([
      db.fn.countAll<number>().as("actions"),
      db.fn.count<number>("identity_id").distinct().as("identities"),
    ])
    .where("run_id", "=", runId)
    .where("status", "=", "pending")
    .where(by, "<", since)
    .executeTakeFirstOrThrow();
  return { actions: Number(r.actions), identities: Number(r.identities) };
}
