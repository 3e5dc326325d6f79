/**
 * Group commit for the executor's two hot journal writes, `markInFlight` and `updateAction`: the
 * writes that arrive while one statement runs go together in the next, one statement for all of
 * them. Each caller's promise settles when the statement that holds its write has committed, so
 * "in_flight is committed before the request is sent" holds as it did with one statement each.
 *
 * Why: every create or delete wrote its action twice, one statement each. On PGlite, whose one
 * thread runs every statement, those statements (about 1 ms each) capped an apply of 100,000
 * creates at about 400 writes a second, five times the floor of `--rate 2000`. Batched, the
 * database's cost per action falls with the concurrency that is waiting on it.
 *
 * Order: the writes of one action keep their order (a write waits for a later statement while an
 * earlier write of the same action is still queued), and a batch never holds one action twice. A
 * write inside a transaction is never batched: it runs at once on the transaction.
 */
import { type Kysely, type RawBuilder, sql } from "kysely";
import { GroupCommit } from "../group-commit.ts";
import { type ActionUpdate, type Database, TOOL_TABLES } from "../schema.ts";
import { type UnnestType, unnestFrom } from "./unnest-insert.ts";

const T = TOOL_TABLES.actions;
const serverNow = () => sql<Date>`now()`;

/** At most this many actions in one statement. */
const MAX_BATCH = 500;

/** The SQL type of each column a batched patch may set (one array parameter each). */
const PATCH_COLUMNS = {
  status: "text",
  outcome: "text",
  attempts: "int4",
  http_status: "int4",
  error: "text",
  result_control_id: "text",
} as const satisfies Partial<Record<keyof ActionUpdate, UnnestType>>;

type PatchColumn = keyof typeof PATCH_COLUMNS;

type Write =
  | { readonly kind: "in_flight"; readonly id: number }
  | { readonly kind: "patch"; readonly id: number; readonly patch: ActionUpdate };

/** The patch without its undefined fields: Kysely leaves those columns as they are, and so do we. */
function defined(patch: ActionUpdate): ActionUpdate {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
}

/**
 * True when every field of the patch is a column of known type holding a plain value (a SQL
 * expression, say `attempts + 1`, is written on its own).
 */
function batchable(patch: ActionUpdate): boolean {
  const fields = Object.entries(patch);
  return (
    fields.length > 0 &&
    fields.every(
      ([k, v]) => Object.hasOwn(PATCH_COLUMNS, k) && (v === null || typeof v !== "object"),
    )
  );
}

function groupOf(write: Write): string {
  return write.kind === "in_flight" ? "in_flight" : `patch:${Object.keys(write.patch).sort()}`;
}

/**
 * The queued writes of the first one's group (its kind, and a patch's columns), in arrival order,
 * at most one per action and none behind an earlier write of the same action that stays queued.
 */
function takeGroup(queue: readonly Write[]): number[] {
  const group = groupOf(queue[0] as Write);
  const taken: number[] = [];
  const takenIds = new Set<number>();
  const heldIds = new Set<number>();
  for (const [i, w] of queue.entries()) {
    const fits =
      taken.length < MAX_BATCH && groupOf(w) === group && !takenIds.has(w.id) && !heldIds.has(w.id);
    if (fits) {
      taken.push(i);
      takenIds.add(w.id);
    } else {
      heldIds.add(w.id);
    }
  }
  return taken;
}

async function writeGroup(db: Kysely<Database>, writes: readonly Write[]): Promise<undefined[]> {
  const first = writes[0] as Write;
  const done = writes.map(() => undefined);
  if (writes.length === 1) {
    await writeOne(db, first);
  } else if (first.kind === "in_flight") {
    await inFlightSet(
      db,
      writes.map((w) => w.id),
    );
  } else {
    const columns = Object.keys(first.patch).sort() as PatchColumn[];
    const rows = writes.map((w) => ({ id: w.id, ...(w as { patch: ActionUpdate }).patch }));
    await patchRows(columns, rows).execute(db);
  }
  return done;
}

const byDb = new WeakMap<object, GroupCommit<Write, undefined>>();

function writesOf(db: Kysely<Database>): GroupCommit<Write, undefined> {
  let w = byDb.get(db);
  if (!w) {
    w = new GroupCommit({ take: takeGroup, run: (writes) => writeGroup(db, writes) });
    byDb.set(db, w);
  }
  return w;
}

async function inFlightSet(db: Kysely<Database>, ids: readonly number[]): Promise<void> {
  await db
    .updateTable(T)
    .set({ status: "in_flight", attempts: sql`attempts + 1`, updated_at: serverNow() })
    .where("id", "in", [...ids])
    .execute();
}

function patchRows(
  columns: readonly PatchColumn[],
  rows: readonly Record<string, unknown>[],
): RawBuilder<unknown> {
  const set = columns.map((c) => sql`${sql.ref(c)} = v.${sql.ref(c)}`);
  const types: Record<string, UnnestType> = { id: "int8" };
  for (const c of columns) types[c] = PATCH_COLUMNS[c];
  return sql`update ${sql.table(T)} as a
    set ${sql.join([...set, sql`updated_at = ${serverNow()}`])}
    from ${unnestFrom("v", types, rows)}
    where a.id = v.id`;
}

async function writeOne(db: Kysely<Database>, write: Write): Promise<void> {
  if (write.kind === "in_flight") return inFlightSet(db, [write.id]);
  await db
    .updateTable(T)
    .set({ ...write.patch, updated_at: serverNow() })
    .where("id", "=", write.id)
    .execute();
}

/** Runs one journal write, batched with those that arrive meanwhile (see the module's comment). */
export function journalWrite(db: Kysely<Database>, write: Write): Promise<void> {
  const w: Write = write.kind === "patch" ? { ...write, patch: defined(write.patch) } : write;
  if (db.isTransaction || (w.kind === "patch" && !batchable(w.patch))) return writeOne(db, w);
  return writesOf(db).submit(w);
}
