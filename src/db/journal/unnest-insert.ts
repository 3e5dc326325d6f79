/**
 * Bulk inserts with one array parameter a column (`insert … select * from unnest($1::text[], …)`)
 * instead of one parameter a value. A 1000-row page of snapshot identities was 4000 parameters for
 * Kysely to compile and PostgreSQL to parse and bind; as arrays it is four, whatever the rows.
 * Works alike on node-postgres and PGlite, which both send a JavaScript array as a PostgreSQL array.
 */
import { type RawBuilder, sql } from "kysely";

/** A column's SQL element type, as the `unnest` cast spells it. */
export type UnnestType = "text" | "int4" | "int8" | "bool" | "timestamptz";

/**
 * `insert into <table> (<columns>) select * from unnest(<one array per column>)`, to be followed
 * by a conflict clause if any. `columns` names each column with its element type, in order; a
 * missing or undefined value is inserted as NULL.
 *
 * @example
 *   await sql`${unnestInsert(TOOL_TABLES.sourceRows, { run_id: "text", seq: "int4" }, rows)}
 *             on conflict (run_id, seq) do nothing`.execute(db);
 */
export function unnestInsert<R extends object>(
  table: string,
  columns: { readonly [K in keyof R & string]?: UnnestType },
  rows: readonly R[],
): RawBuilder<unknown> {
  const names = Object.keys(columns) as (keyof R & string)[];
  return sql`insert into ${sql.table(table)} (${sql.join(names.map((n) => sql.ref(n)))})
             select * from unnest(${columnArrays(columns, rows)})`;
}

/**
 * `unnest(<one array per column>) as <alias>(<columns>)`: many rows' values as a relation, for an
 * update that joins them (`update … from <this> where t.id = v.id`). Same arrays, same rules.
 *
 * @example
 *   sql`update t set status = v.status from ${unnestFrom("v", { id: "int8", status: "text" }, rows)}
 *       where t.id = v.id`
 */
export function unnestFrom<R extends object>(
  alias: string,
  columns: { readonly [K in keyof R & string]?: UnnestType },
  rows: readonly R[],
): RawBuilder<unknown> {
  const names = Object.keys(columns).map((n) => sql.ref(n));
  return sql`unnest(${columnArrays(columns, rows)}) as ${sql.ref(alias)}(${sql.join(names)})`;
}

/** One array parameter a column, cast to its element type. */
function columnArrays<R extends object>(
  columns: { readonly [K in keyof R & string]?: UnnestType },
  rows: readonly R[],
): RawBuilder<unknown> {
  const names = Object.keys(columns) as (keyof R & string)[];
  return sql.join(
    names.map((name) =>
      arrayParam(
        rows.map((row) => row[name]),
        columns[name] as UnnestType,
      ),
    ),
  );
}

/**
 * One array parameter, `$n::<type>[]`, bound as PostgreSQL's array text (`arrayLiteral`) rather
 * than as a JavaScript array for the driver to convert: node-postgres quotes each element with two
 * regular expressions, which was an eighth of a reconcile's CPU with 200,000 identities to store
 * (bench p). Both drivers send a string parameter as it is.
 *
 * @example
 *   sql`select * from unnest(${arrayParam(ids, "text")}) as u(id)`
 */
export function arrayParam(values: readonly unknown[], type: UnnestType): RawBuilder<unknown> {
  return sql`${arrayLiteral(values)}::${sql.raw(type)}[]`;
}

/**
 * A one-dimensional array as PostgreSQL's array input reads it: `{"a","b\"c",NULL,t,3}`. Every
 * string is quoted (no keyword, blank or brace is special inside quotes), with `\` and `"`
 * escaped; null and undefined are NULL; booleans t and f; numbers and bigints as digits; a Date
 * as its ISO instant (a timestamptz reads the offset). Anything else as its JSON, quoted.
 *
 * @example
 *   arrayLiteral(["x", null, 'say "hi"']); // '{"x",NULL,"say \"hi\""}'
 */
export function arrayLiteral(values: readonly unknown[]): string {
  let out = "{";
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ",";
    out += element(values[i]);
  }
  return `${out}}`;
}

function element(v: unknown): string {
  if (v === null || v === undefined) return "NULL";
  if (typeof v === "string") return quoted(v);
  if (typeof v === "boolean") return v ? "t" : "f";
  if (typeof v === "number" || typeof v === "bigint") return String(v);
  if (v instanceof Date) return quoted(v.toISOString());
  return quoted(JSON.stringify(v));
}

function quoted(s: string): string {
  // Most elements (ids, kinds, timestamps) hold neither character: two scans, no copy.
  if (s.indexOf("\\") < 0 && s.indexOf('"') < 0) return `"${s}"`;
  return `"${s.replace(/[\\"]/g, "\\$&")}"`;
}

/**
 * Several writes sent as one statement: all but the last as data-modifying CTEs, the last as the
 * statement itself (so its RETURNING is the result). One statement is one round trip, and alone
 * (outside a transaction) it is atomic. Empty list: null.
 *
 * @example
 *   const write = chainWrites([insertIdentities, insertControls, insertFindingsReturningIds]);
 *   if (write) await write.execute(trx);
 */
export function chainWrites(writes: readonly RawBuilder<unknown>[]): RawBuilder<unknown> | null {
  const last = writes.at(-1);
  if (!last) return null;
  if (writes.length === 1) return last;
  const ctes = writes.slice(0, -1).map((w, i) => sql`${sql.raw(`w${i}`)} as (${w})`);
  return sql`with ${sql.join(ctes)} ${last}`;
}
