/**
 * Finds the user's source relation and its three columns in the catalog before any row is read,
 * so a typo stops the run with a message naming the flag to fix instead of a SQL error mid-way.
 *
 * Names are literal, as typed: no case folding and no SQL quoting syntax. `--source-relation`
 * is `table` (found through the search_path) or `schema.table` (split at the first dot). Every
 * name reaches SQL either as a bind parameter or through `sql.id`, which doubles embedded double
 * quotes, so a name can never inject SQL.
 */
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { SourceConfig } from "../../config.ts";
import { UserError } from "../../errors.ts";
import type { Logger } from "../../log.ts";

// biome-ignore lint/suspicious/noExplicitAny: the source relation is the user's, not in our types
type AnyDb = Kysely<any>;

const FLAG_TYPES = new Set([
  "boolean",
  "smallint",
  "integer",
  "bigint",
  "text",
  "character varying",
  "character",
]);
const ID_TYPES = new Set([
  "uuid",
  "text",
  "character varying",
  "character",
  "name",
  "smallint",
  "integer",
  "bigint",
]);

export interface SourceColumn {
  readonly name: string;
  /** Base type name (domains resolved), as `format_type` spells it. */
  readonly type: string;
  /** The column qualified by schema and table: in ORDER BY a bare name would resolve to the output
   * alias of the same name (our `::text` casts), sorting as text and defeating the index. */
  readonly ref: RawBuilder<unknown>;
}

export interface ResolvedSource {
  /** `schema.table`, for messages. */
  readonly display: string;
  readonly schema: string;
  readonly name: string;
  /** `r` table, `v` view, `m` materialized view, `p` partitioned table, `f` foreign table. */
  readonly kind: string;
  readonly table: RawBuilder<unknown>;
  readonly id: SourceColumn;
  readonly userDisabled: SourceColumn;
  readonly adminDisabled: SourceColumn;
  /** True when some index starts with the id column (keyset pages are then index range scans). */
  readonly idIndexed: boolean;
}

/** The flag and env var that set each part of the source, for error messages. */
export const SOURCE_FLAGS = Object.freeze({
  relation: "--source-relation (env CONTROLS_SOURCE_RELATION)",
  idColumn: "--source-id-column (env CONTROLS_SOURCE_ID_COLUMN)",
  userDisabledColumn: "--source-user-disabled-column (env CONTROLS_SOURCE_USER_DISABLED_COLUMN)",
  adminDisabledColumn: "--source-admin-disabled-column (env CONTROLS_SOURCE_ADMIN_DISABLED_COLUMN)",
});

/** Splits `schema.table` at the first dot; a bare name has no schema. */
export function splitRelation(relation: string): { schema: string | undefined; name: string } {
  const dot = relation.indexOf(".");
  if (dot <= 0 || dot === relation.length - 1) return { schema: undefined, name: relation };
  return { schema: relation.slice(0, dot), name: relation.slice(dot + 1) };
}

/**
 * Resolves and checks the configured relation and columns: existence, SELECT privilege, usable
 * types. Warns (via `logger`) when the id column has no index.
 *
 * @example
 *   const src = await resolveSource(db, source);
 *   await sql`select ${src.id.ref} from ${src.table}`.execute(db);
 */
export async function resolveSource(
  db: AnyDb,
  source: SourceConfig,
  logger?: Logger,
): Promise<ResolvedSource> {
  const rel = await findRelation(db, source);
  const display = `${rel.nspname}.${rel.relname}`;
  if (!["r", "v", "m", "p", "f"].includes(rel.relkind)) {
    throw new UserError(`"${display}" is not a table or view; set ${SOURCE_FLAGS.relation}.`);
  }
  const columns = await relationColumns(db, rel.oid);
  const column = (
    configured: string,
    flag: keyof typeof SOURCE_FLAGS,
    allowed: Set<string>,
    role: string,
  ) => checkedColumn({ columns, rel, display }, { configured, flag, allowed, role });
  const id = column(
    source.idColumn,
    "idColumn",
    ID_TYPES,
    "an identity id (expected uuid or text)",
  );
  const flagRole = "a flag (expected boolean; integer 0/1 and text true/false are accepted too)";
  const userDisabled = column(
    source.userDisabledColumn,
    "userDisabledColumn",
    FLAG_TYPES,
    flagRole,
  );
  const adminDisabled = column(
    source.adminDisabledColumn,
    "adminDisabledColumn",
    FLAG_TYPES,
    flagRole,
  );

  const idIndexed = await sql<{ found: boolean }>`
    select exists (select 1 from pg_index where indrelid = ${rel.oid} and indkey[0] = ${id.attnum}) as found`
    .execute(db)
    .then((r) => r.rows[0]?.found === true);
  if (!idIndexed && rel.relkind !== "v" && rel.relkind !== "f") {
    logger?.warn(
      `No index on ${display}(${id.name}): each page of ${source.batchSize} rows scans the whole relation. On a large table create one (create index on ${display} (${id.name})) or raise --batch-size.`,
    );
  }
  return Object.freeze({
    display,
    schema: rel.nspname,
    name: rel.relname,
    kind: rel.relkind,
    table: sql.id(rel.nspname, rel.relname),
    id: { name: id.name, type: id.type, ref: id.ref },
    userDisabled: { name: userDisabled.name, type: userDisabled.type, ref: userDisabled.ref },
    adminDisabled: { name: adminDisabled.name, type: adminDisabled.type, ref: adminDisabled.ref },
    idIndexed,
  });
}

export interface RelationRow {
  readonly oid: number;
  readonly nspname: string;
  readonly relname: string;
  readonly relkind: string;
  readonly can_select: boolean;
}

interface ColumnRow {
  readonly attname: string;
  readonly attnum: number;
  readonly type: string;
  readonly can_select: boolean;
}

/** The configured relation in the catalog, or a UserError naming the flag to fix. */
async function findRelation(db: AnyDb, source: SourceConfig): Promise<RelationRow> {
  const rel = await locateRelation(db, source.relation);
  if (!rel) {
    const { schema } = splitRelation(source.relation);
    throw new UserError(
      `Relation "${source.relation}" not found${schema === undefined ? " in the search_path" : ""}; set it with ${SOURCE_FLAGS.relation}. Names are case-sensitive and written without quotes, e.g. identities or legacy.users. (To create a synthetic one for a trial: controls-migrate db seed --identities 1000.)`,
    );
  }
  return rel;
}

/**
 * The relation `--source-relation`'s text names in this session (its search_path decides a bare
 * name), with its schema and object id; undefined when it names none.
 */
export async function locateRelation(
  db: AnyDb,
  relation: string,
): Promise<RelationRow | undefined> {
  const { schema, name } = splitRelation(relation);
  // A dotted name is tried as schema.table first, then as a table whose name contains a dot.
  const regclass =
    schema === undefined
      ? sql`to_regclass(quote_ident(${name}))`
      : sql`coalesce(to_regclass(quote_ident(${schema}) || '.' || quote_ident(${name})),
                     to_regclass(quote_ident(${relation})))`;
  return sql<RelationRow>`
    select c.oid::int8 as oid, n.nspname, c.relname, c.relkind::text as relkind,
           has_table_privilege(c.oid, 'SELECT') as can_select
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where c.oid = ${regclass}`
    .execute(db)
    .then((r) => r.rows[0]);
}

/** A relation's columns in order, each with its base type (domains resolved) and privilege. */
async function relationColumns(db: AnyDb, oid: number): Promise<ColumnRow[]> {
  return sql<ColumnRow>`
    select a.attname, a.attnum::int as attnum,
           case when t.typtype = 'd' then format_type(t.typbasetype, null)
                else format_type(a.atttypid, null) end as type,
           has_column_privilege(a.attrelid, a.attnum, 'SELECT') as can_select
    from pg_attribute a join pg_type t on t.oid = a.atttypid
    where a.attrelid = ${oid} and a.attnum > 0 and not a.attisdropped
    order by a.attnum`
    .execute(db)
    .then((r) => r.rows);
}

/** One configured column, found, readable and of a type that can hold its role; else a UserError. */
function checkedColumn(
  of: {
    readonly columns: readonly ColumnRow[];
    readonly rel: RelationRow;
    readonly display: string;
  },
  want: {
    readonly configured: string;
    readonly flag: keyof typeof SOURCE_FLAGS;
    readonly allowed: Set<string>;
    readonly role: string;
  },
): SourceColumn & { readonly attnum: number } {
  const { columns, rel, display } = of;
  const { configured, flag, allowed, role } = want;
  const found = columns.find((c) => c.attname === configured);
  if (!found) {
    const near = columns.find((c) => c.attname.toLowerCase() === configured.toLowerCase());
    const hint = near ? ` Did you mean "${near.attname}"?` : "";
    throw new UserError(
      `Column "${configured}" not found in relation "${display}"; set it with ${SOURCE_FLAGS[flag]}.${hint} Columns present: ${columns.map((c) => c.attname).join(", ") || "(none)"}.`,
    );
  }
  if (!found.can_select) {
    throw new UserError(
      `No SELECT privilege on column "${configured}" of "${display}" for the connected database user; grant it, or change ${SOURCE_FLAGS[flag]}.`,
    );
  }
  if (!allowed.has(found.type)) {
    throw new UserError(
      `Column "${configured}" of "${display}" has type ${found.type}, which cannot hold ${role}; set the right column with ${SOURCE_FLAGS[flag]}.`,
    );
  }
  return {
    name: found.attname,
    type: found.type,
    attnum: found.attnum,
    ref: sql.id(rel.nspname, rel.relname, found.attname),
  };
}
