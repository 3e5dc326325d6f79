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
import { type ActionUpdate, type Database, TOOL_TABLES } from "../schema.ts";

const T = TOOL_TABLES.actions;
const serverNow = () => sql<Date>`now()`;

/** At most this many actions in one statement (its JSON parameter stays small). */
const MAX_BATCH = 500;

/** The SQL type of each column a patch may set, for `jsonb_to_recordset`. */
const PATCH_COLUMNS = {
  status: "text",
  outcome: "text",
  attempts: "integer",
  http_status: "integer",
  error: "text",
  result_control_id: "text",
} as const satisfies Partial<Record<keyof ActionUpdate, string>>;

type PatchColumn = keyof typeof PATCH_COLUMNS;

type Write =
  | { readonly kind: "in_flight"; readonly id: number }
  | { readonly kind: "patch"; readonly id: number; readonly patch: ActionUpdate };

interface Queued {
  readonly write: Write;
  /** The group a write can share a statement with: its kind, and a patch's columns. */
  readonly group: string;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

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

class JournalWrites {
  readonly #db: Kysely<Database>;
  #queue: Queued[] = [];
  #running = false;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  enqueue(write: Write): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ write, group: groupOf(write), resolve, reject });
      if (!this.#running) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#running = true;
    try {
      while (this.#queue.length > 0) {
        const batch = this.#take();
        try {
          await this.#write(batch.map((q) => q.write));
          for (const q of batch) q.resolve();
        } catch (err) {
          for (const q of batch) q.reject(err);
        }
      }
    } finally {
      this.#running = false;
    }
  }

  /**
   * The writes of the first queued write's group, in arrival order, at most one per action and
   * none behind an earlier write of the same action that stays queued.
   */
  #take(): Queued[] {
    const group = (this.#queue[0] as Queued).group;
    const taken: Queued[] = [];
    const takenIds = new Set<number>();
    const heldIds = new Set<number>();
    const rest: Queued[] = [];
    for (const q of this.#queue) {
      const id = q.write.id;
      const fits =
        taken.length < MAX_BATCH && q.group === group && !takenIds.has(id) && !heldIds.has(id);
      if (fits) {
        taken.push(q);
        takenIds.add(id);
      } else {
        rest.push(q);
        heldIds.add(id);
      }
    }
    this.#queue = rest;
    return taken;
  }

  async #write(writes: readonly Write[]): Promise<void> {
    const first = writes[0] as Write;
    if (writes.length === 1) return writeOne(this.#db, first);
    const ids = writes.map((w) => w.id);
    if (first.kind === "in_flight") {
      await inFlightSet(this.#db, ids);
      return;
    }
    const columns = Object.keys(first.patch).sort() as PatchColumn[];
    const rows = writes.map((w) => ({ id: w.id, ...(w as { patch: ActionUpdate }).patch }));
    await patchRows(columns, rows).execute(this.#db);
  }
}

const byDb = new WeakMap<object, JournalWrites>();

function writesOf(db: Kysely<Database>): JournalWrites {
  let w = byDb.get(db);
  if (!w) {
    w = new JournalWrites(db);
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

function patchRows(columns: readonly PatchColumn[], rows: readonly object[]): RawBuilder<unknown> {
  const set = columns.map((c) => sql`${sql.ref(c)} = v.${sql.ref(c)}`);
  const types = columns.map((c) => sql`${sql.ref(c)} ${sql.raw(PATCH_COLUMNS[c])}`);
  return sql`update ${sql.table(T)} as a
    set ${sql.join([...set, sql`updated_at = ${serverNow()}`])}
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as v(id bigint, ${sql.join(types)})
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
  return writesOf(db).enqueue(w);
}
