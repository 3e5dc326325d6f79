/**
 * What `revert RUN_ID` reads and journals: the run's own writes, turned into the actions that undo
 * them, and the reverts a run already has.
 */
import { type Kysely, sql } from "kysely";
import { type Database, type Run, TOOL_TABLES } from "../schema.ts";

const A = TOOL_TABLES.actions;
const R = TOOL_TABLES.runs;

/**
 * Journals, as pending actions of `revertRunId`, the undoing of every write `ofRunId` made: a
 * delete of each control it created (outcome `created`, with its id; adopted ones existed before
 * it and are left alone), and a create of a CLIENT SELL_ONLY for each control it deleted. One
 * statement; returns how many actions it journaled.
 *
 * @example
 *   const n = await journalRevert(db, "20261123-101500-ab12", "20261122-090000-cd34");
 */
export async function journalRevert(
  db: Kysely<Database>,
  revertRunId: string,
  ofRunId: string,
): Promise<number> {
  const r = await sql`
    insert into ${sql.table(A)}
      (run_id, identity_id, finding_id, action, control_type, control_key, status)
    select ${revertRunId}, a.identity_id, null,
           case when a.action = 'create' then 'delete' else 'create' end,
           a.control_type,
           case when a.action = 'create' then a.result_control_id else 'SELL_ONLY:client' end,
           'pending'
    from ${sql.table(A)} a
    where a.run_id = ${ofRunId} and a.status = 'succeeded'
      and ((a.action = 'create' and a.outcome = 'created' and a.result_control_id is not null)
        or (a.action = 'delete' and a.outcome = 'deleted'))
    order by a.id
    on conflict (run_id, identity_id, action, control_key) do nothing`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

/**
 * The reverts of a run that sent (or would send) writes, newest first: dry runs are left out.
 *
 * @example
 *   const [latest] = await revertsOf(db, runId);
 */
export async function revertsOf(db: Kysely<Database>, ofRunId: string): Promise<Run[]> {
  return (
    db
      .selectFrom(R)
      .selectAll()
      .where("mode", "=", "revert")
      .where("parent_run_id", "=", ofRunId)
      .where("dry_run", "=", false)
      // A declined revert wrote nothing: it neither blocks nor is continued by a new one.
      .where("status", "!=", "declined")
      .orderBy("started_at", "desc")
      .execute()
  );
}

/**
 * Puts back to pending the actions a `--limit` left out, so that resuming the revert does them.
 * Returns how many.
 *
 * @example
 *   await reopenLimited(db, revertRunId);
 */
export async function reopenLimited(db: Kysely<Database>, runId: string): Promise<number> {
  const r = await db
    .updateTable(A)
    .set({ status: "pending", outcome: null, updated_at: sql<Date>`now()` })
    .where("run_id", "=", runId)
    .where("status", "=", "skipped")
    .where("outcome", "=", "not_run_limit")
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/**
 * How many of a run's actions a later apply or reconcile superseded (the run crashed and the later
 * run settled what it left): a revert of such a partial run is refused.
 */
export async function countSuperseded(db: Kysely<Database>, runId: string): Promise<number> {
  const r = await db
    .selectFrom(A)
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("run_id", "=", runId)
    .where("status", "=", "skipped")
    .where("outcome", "=", "superseded")
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/**
 * How many of a run's actions a `--limit` left out.
 *
 * @example
 *   if ((await countLimited(db, revertRunId)) > 0) { ... }
 */
export async function countLimited(db: Kysely<Database>, runId: string): Promise<number> {
  const r = await db
    .selectFrom(A)
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("run_id", "=", runId)
    .where("status", "=", "skipped")
    .where("outcome", "=", "not_run_limit")
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/**
 * The pruned controls a revert created again: the identity, the control the reverted run deleted,
 * and the new control's id.
 *
 * @example
 *   for (const c of await recreatedControls(db, revertRunId, ofRunId)) console.log(c.new_control_id);
 */
export async function recreatedControls(
  db: Kysely<Database>,
  revertRunId: string,
  ofRunId: string,
): Promise<{ identity_id: string; deleted_control_id: string; new_control_id: string }[]> {
  const rows = await db
    .selectFrom(`${A} as r`)
    .innerJoin(`${A} as o`, (j) =>
      j
        .onRef("o.identity_id", "=", "r.identity_id")
        .on("o.run_id", "=", ofRunId)
        .on("o.action", "=", "delete")
        .on("o.outcome", "=", "deleted"),
    )
    .select(["r.identity_id", "o.control_key as deleted", "r.result_control_id as created"])
    .where("r.run_id", "=", revertRunId)
    .where("r.action", "=", "create")
    .where("r.status", "=", "succeeded")
    .orderBy("r.id")
    .execute();
  return rows.map((r) => ({
    identity_id: r.identity_id,
    deleted_control_id: r.deleted,
    new_control_id: r.created ?? "",
  }));
}
