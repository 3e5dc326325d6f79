/**
 * The source reader's pages (see `source-reader.ts` for the reading order and its reasons): by id
 * keyset, whole or with the clean rows left in the database; by storage order for `omitClean` on
 * tables; and the NULL-id rows last.
 */
import { type Kysely, type RawBuilder, sql } from "kysely";
import { FALSE_FLAG_TEXTS, type RawSourceRow } from "./source-anomalies.ts";
import type { ResolvedSource, SourceColumn } from "./source-relation.ts";

// biome-ignore lint/suspicious/noExplicitAny: the source relation is the user's, not in our types
type AnyDb = Kysely<any>;

export interface PageRow extends RawSourceRow {
  readonly rowCtid?: string;
  /** Set by the `omitClean` pages: rows sharing the id, position in the page, rows in the page. */
  readonly copies?: number;
  readonly rn?: number;
  readonly total?: number;
}

/** Pages of a storage-order pass read ahead of the one being stored. */
const READ_AHEAD = 2;

/** Above this many duplicated ids, `omitClean` reads in id order, where copies are neighbours. */
export const MAX_PHYSICAL_DUPLICATES = 10_000;

/** The ids held by more than one row, with their number of rows: one hashed scan. */
export async function duplicateIds(db: AnyDb, src: ResolvedSource): Promise<Map<string, number>> {
  const id = src.id.ref;
  const r = await sql<{ id: string; copies: number }>`
    select ${id}::text as id, count(*)::int as copies from ${src.table}
    where ${id} is not null group by ${id} having count(*) > 1
    limit ${MAX_PHYSICAL_DUPLICATES + 1}`.execute(db);
  return new Map(r.rows.map((x) => [x.id, Number(x.copies)]));
}

/** The sixteen lower-case hex digits, as bytes, for `btrim(bytea, bytea)`. */
const HEX_BYTES = Buffer.from("0123456789abcdef");

/**
 * True exactly when the text `id` is a lower-case UUID (`LOWER_UUID_PATTERN`), without the regular
 * expression, which cost 2.4 µs a row (most of a 1,000,000-row pass): 36 single-byte characters
 * with dashes at the four places (LIKE), four dashes in all, and nothing but hex digits once they
 * are removed (`btrim` of the bytes, no multibyte handling). The read-source test holds it to
 * the regular expression on awkward ids.
 */
function lowerUuidText(id: RawBuilder<unknown>): RawBuilder<unknown> {
  // textsend gives the text's own bytes; a ::bytea cast would read backslash escapes in them.
  return sql`(${id} like '________-____-____-____-____________' and octet_length(${id}) = 36
    and btrim(textsend(replace(${id}, '-', '')), ${HEX_BYTES}::bytea) = ''::bytea
    and octet_length(replace(${id}, '-', '')) = 32)`;
}

/** A lower-case UUID id and two exact false literals (a boolean false, or such a text). */
function cleanRow(src: ResolvedSource): RawBuilder<unknown> {
  // Cheapest first, by the columns' own types: a boolean flag needs no text, a uuid id is always a
  // lower-case UUID as text, and the id check (most of the cost) runs last, if at all.
  const falseFlag = (col: SourceColumn) =>
    col.type === "boolean"
      ? sql`${col.ref} is false`
      : sql`lower(${col.ref}::text) = any(${FALSE_FLAG_TEXTS}::text[])`;
  // A NULL id is never clean: it is an anomaly, sent in its place.
  const id =
    src.id.type === "uuid"
      ? sql`${src.id.ref} is not null`
      : lowerUuidText(sql`${src.id.ref}::text`);
  return sql`coalesce(${falseFlag(src.userDisabled)} and ${falseFlag(src.adminDisabled)} and ${id}, false)`;
}

/** A storage-order page: the rows sent and the number of rows the page spans. */
export interface PhysicalPage {
  readonly rows: PageRow[];
  readonly total: number;
}

/**
 * `omitClean` on a table or materialized view: the rows in the order they are stored, a page being
 * a range of blocks (a TID range scan, so the heap is read once, in order, instead of once per id
 * through the index). Copies of an id can be anywhere, so the ids held by several rows are found
 * first (`duplicateIds`) and every row of them is sent. NULL ids are never clean, so they come in
 * their place.
 *
 * A page is one row: its row count and its rows of interest as one JSON array. Against a row each
 * with `count(*) over ()`, the range streams instead of filling the window's buffer, and the
 * driver parses one text: 80 against 110 ms a page of 12,840 rows on PGlite.
 */
export async function* physicalPagesOfInterest(
  db: AnyDb,
  src: ResolvedSource,
  dups: Map<string, number>,
  n: number,
  signal?: AbortSignal,
): AsyncGenerator<PhysicalPage> {
  const cols = selectedColumns(src);
  const { table } = src;
  const blockSize = await sql<{ blocks: number }>`
    select (pg_relation_size(format('%I.%I', ${src.schema}::text, ${src.name}::text)::regclass)
            / current_setting('block_size')::int)::int as blocks
  `.execute(db);
  // The relation's size when the pass starts: do not change it during a run (see above).
  const blocks = Number(blockSize.rows[0]?.blocks ?? 0);
  const dupIds = [...dups.keys()];
  // A TID range scan returns its rows in storage order, so `row_number() over ()` numbers them in
  // that order without the sort an `over (order by ctid)` costs (a third of the query); the
  // aggregate reads them in that order too.
  const fetch = async (from: number, to: number): Promise<PhysicalPage> => {
    const upper = to >= blocks ? sql`` : sql`and ${table}.ctid < ${`(${to},0)`}::tid`;
    const r = await sql<{ total: number; rows: string }>`
      select count(*)::int as total,
             coalesce(json_agg(json_build_array(p.id, p."userDisabled", p."adminDisabled", p.rn))
                        filter (where not p.clean or p.id = any(${dupIds}::text[])), '[]')::text
               as rows
      from (
        select ${cols}, ${cleanRow(src)} as clean, row_number() over () as rn
        from ${table} where ${table}.ctid >= ${`(${from},0)`}::tid ${upper}
      ) p`.execute(db);
    const row = r.rows[0];
    const tuples = JSON.parse(row?.rows ?? "[]") as [
      string | null,
      string | null,
      string | null,
      number,
    ][];
    return {
      total: Number(row?.total ?? 0),
      rows: tuples.map(([id, userDisabled, adminDisabled, rn]) => ({
        id,
        userDisabled,
        adminDisabled,
        rn,
        copies: id === null ? 1 : (dups.get(id) ?? 1),
      })),
    };
  };
  let step = 8;
  let from = 0;
  // Pages are read ahead while the caller stores the one before: PostgreSQL scans on its own
  // connections meanwhile, so the pass is not paced by the caller's work between pages.
  const ahead: Promise<PhysicalPage>[] = [];
  const launch = () => {
    if (from >= blocks) return;
    const to = Math.min(blocks, from + step);
    const page = fetch(from, to);
    page.catch(() => {}); // awaited in its turn; not an unhandled rejection meanwhile
    ahead.push(page);
    from = to;
  };
  for (let i = 0; i < READ_AHEAD; i++) launch();
  while (ahead.length > 0) {
    signal?.throwIfAborted();
    const page = await (ahead.shift() as Promise<PhysicalPage>);
    // Aim at `n` rows sent a page, whatever the rows per block and the share of clean rows (a
    // page of a table of clean rows spans more blocks); grow at most fourfold a page, so a run of
    // clean or empty blocks never makes the next page huge.
    step = Math.max(1, Math.min(step * 4, Math.round((step * n) / Math.max(page.rows.length, 1))));
    launch();
    if (page.total > 0) yield page;
  }
}

/**
 * Pages of the rows with an id, in id order (keyset on the id), whole rows or, with `omitClean`,
 * only those the database cannot prove clean.
 */
export async function* idKeysetPages(
  db: AnyDb,
  src: ResolvedSource,
  n: number,
  omitClean: boolean,
  signal?: AbortSignal,
): AsyncGenerator<PageRow[]> {
  const id = src.id.ref;
  let last: string | null = null;
  for (;;) {
    signal?.throwIfAborted();
    const after = last === null ? sql`` : sql`and ${id} > ${last}`;
    const { page, full } = await (omitClean ? rangeOfInterest : wholeKeysetPage)(db, src, after, n);
    if (page.length === 0) return;
    last = page[page.length - 1]!.id;
    yield page;
    if (!full) return;
  }
}

type IdPage = { page: PageRow[]; full: boolean };

/**
 * The next `n` rows after the bound. Keyset on a non-unique key would skip the copies of an id
 * that straddle a page boundary, so a full page's trailing id group is re-read whole.
 */
async function wholeKeysetPage(
  db: AnyDb,
  src: ResolvedSource,
  after: RawBuilder<unknown>,
  n: number,
): Promise<IdPage> {
  const cols = selectedColumns(src);
  const { table } = src;
  const id = src.id.ref;
  const page = await rowsOf(
    db,
    sql`select ${cols} from ${table} where ${id} is not null ${after} order by ${id} limit ${n}`,
  );
  const full = page.length === n;
  if (!full) return { page, full };
  const boundary = page[page.length - 1]!.id!;
  let cut = page.length;
  while (cut > 0 && page[cut - 1]!.id === boundary) cut--;
  const group = await rowsOf(db, sql`select ${cols} from ${table} where ${id} = ${boundary}`);
  return { page: page.slice(0, cut).concat(group), full };
}

/**
 * The id range (bound, hi], hi being the `n`-th id after the bound, so every copy of hi is in it,
 * with the clean rows left in the database (see `omitClean`). Its last row is always sent, clean
 * or not: it carries hi and the page's row count.
 */
async function rangeOfInterest(
  db: AnyDb,
  src: ResolvedSource,
  after: RawBuilder<unknown>,
  n: number,
): Promise<IdPage> {
  const { table } = src;
  const id = src.id.ref;
  const page = await rowsOf(
    db,
    sql`with r as (select ${id} as k from ${table} where ${id} is not null ${after}
                   order by ${id} limit ${n}),
             b as (select max(k) as hi, count(*)::int as got from r)
        select p.id, p."userDisabled", p."adminDisabled",
               p.copies::int as copies, p.rn::int as rn, p.total::int as total, b.got
        from b cross join lateral (
          select ${selectedColumns(src)}, ${cleanRow(src)} as clean,
                 count(*) over (partition by ${id}) as copies,
                 row_number() over (order by ${id}) as rn, count(*) over () as total
          from ${table} where ${id} is not null ${after} and ${id} <= b.hi
        ) p
        where p.copies > 1 or p.rn = p.total or not p.clean
        order by p.rn`,
  );
  return { page, full: (page[0] as (PageRow & { got: number }) | undefined)?.got === n };
}

/**
 * NULL ids sort outside any keyset: on tables and materialized views they are read by ctid keyset
 * (a TID range scan); on views and partitioned or foreign tables, which have no usable ctid, by
 * LIMIT/OFFSET ordered by every selected column, exact because rows tied on every column are
 * indistinguishable to us.
 */
export async function* nullIdPages(
  db: AnyDb,
  src: ResolvedSource,
  n: number,
  signal?: AbortSignal,
): AsyncGenerator<PageRow[]> {
  const cols = selectedColumns(src);
  const { table } = src;
  const id = src.id.ref;
  if (src.kind === "r" || src.kind === "m") {
    let lastCtid = "(0,0)"; // item numbers start at 1, so this precedes every tuple
    for (;;) {
      signal?.throwIfAborted();
      const page = await rowsOf(
        db,
        sql`select ${table}.ctid::text as "rowCtid", ${cols} from ${table}
            where ${id} is null and ${table}.ctid > ${lastCtid}::tid
            order by ${table}.ctid limit ${n}`,
      );
      if (page.length === 0) return;
      lastCtid = page[page.length - 1]!.rowCtid!;
      yield page;
      if (page.length < n) return;
    }
  }
  const ud = src.userDisabled.ref;
  const ad = src.adminDisabled.ref;
  for (let offset = 0; ; offset += n) {
    signal?.throwIfAborted();
    const page = await rowsOf(
      db,
      sql`select ${cols} from ${table} where ${id} is null
          order by ${ud} nulls first, ${ad} nulls first limit ${n} offset ${offset}`,
    );
    if (page.length === 0) return;
    yield page;
    if (page.length < n) return;
  }
}

/** The three columns as text, named as `RawSourceRow` has them. */
export function selectedColumns(src: ResolvedSource): RawBuilder<unknown> {
  return sql`${src.id.ref}::text as id, ${src.userDisabled.ref}::text as "userDisabled",
             ${src.adminDisabled.ref}::text as "adminDisabled"`;
}

export async function rowsOf(db: AnyDb, query: RawBuilder<unknown>): Promise<PageRow[]> {
  const result = await (query as RawBuilder<PageRow>).execute(db);
  return result.rows;
}
