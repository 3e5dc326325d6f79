/**
 * Streams the user's legacy relation (id, user_disabled, admin_disabled) in constant memory and
 * classifies every row (see `source-anomalies.ts`). Read-only: it never writes to that relation.
 *
 * Pagination. Keyset on the id column alone, in the column's own type so an index on it serves
 * each page as a range scan. Keyset on a non-unique key would skip the copies of an id that
 * straddle a page boundary, so when a page is full its trailing id group is dropped and re-read
 * whole (`where id = <boundary>`). Every id group therefore sits entirely inside one page, which
 * makes duplicate detection a per-page count, and the next page starts strictly after it. (Keyset
 * on `(id, ctid)` was rejected: views have no ctid.) A page can thus exceed `batchSize` by the
 * number of copies of its last id.
 *
 * A migration needs only the rows with a flag true or an anomaly (about one in ten). With
 * `omitClean` the database sends only the rows it cannot prove clean, with each row's copies and
 * position, so the rest are counted without crossing the wire or being classified one by one. A
 * table or materialized view is then read in the order it is stored, by block ranges: reading a
 * large table in id order through its index visits the heap once per row in random order, which
 * cost 20–30 s of a 1,000,000-row pass. Other relations are read by id ranges.
 *
 * NULL ids sort outside any keyset, so they are read last, as their own phase: on tables and
 * materialized views by ctid keyset (a TID range scan); on views and partitioned or foreign
 * tables, which have no usable ctid, by LIMIT/OFFSET ordered by every selected column, which is
 * exact because rows tied on every column are indistinguishable to us.
 *
 * Consistency: pages are separate statements, not one snapshot. Do not change the relation during
 * a run; a row inserted or re-keyed mid-read may be missed or seen in its new state.
 *
 * Ids are compared as stored: `ABC…` and `abc…` in a text column are different ids (and the
 * upper-case one is a `non_uuid_id`), so case-variant duplicates are not detected.
 */
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { SourceConfig } from "../config.ts";
import type { Logger } from "../log.ts";
import {
  type ClassifiedRow,
  classifyRow,
  FALSE_FLAG_TEXTS,
  LOWER_UUID_PATTERN,
  type RawSourceRow,
  TRUE_FLAG_TEXTS,
} from "./source-anomalies.ts";
import { type ResolvedSource, resolveSource, type SourceColumn } from "./source-relation.ts";

export type { AnomalyKind, ClassifiedRow } from "./source-anomalies.ts";
export { ANOMALY_KIND_NAMES, ANOMALY_KINDS } from "./source-anomalies.ts";

// biome-ignore lint/suspicious/noExplicitAny: the source relation is the user's, not in our types
type AnyDb = Kysely<any>;

/** One source row, classified. `seq` is its 1-based position in the relation's id order. */
export interface SourceRow extends ClassifiedRow {
  readonly seq: number;
}

export interface SourceBatch {
  readonly rows: SourceRow[];
  /** Rows of the relation the batch covers: `rows.length`, plus the clean rows `omitClean` left out. */
  readonly rowsRead: number;
}

export interface ReadSourceOptions {
  /** Checked before each page; when aborted the generator throws the signal's reason. */
  readonly signal?: AbortSignal;
  /** Receives the "no index on the id column" warning. */
  readonly logger?: Logger;
  /**
   * Leave out the rows the database can tell are clean: a lower-case UUID id on one row only, and
   * both flags exactly a false literal. `classifyRow` would find such a row valid, with no
   * anomaly and no flag true, so a migration only counts it; `rowsRead` still does. The test is
   * strict (no trimming, no case folding of the id), so any row in doubt is delivered and
   * classified here as usual, with the `seq` it would have had.
   */
  readonly omitClean?: boolean;
  /** Called after each page, before it is yielded (progress). */
  onBatch?(progress: { readonly rowsRead: number; readonly batchRows: number }): void;
}

interface PageRow extends RawSourceRow {
  readonly rowCtid?: string;
  /** Set by the `omitClean` pages: rows sharing the id, position in the page, rows in the page. */
  readonly copies?: number;
  readonly rn?: number;
  readonly total?: number;
}

/**
 * Yields every row of the source relation in batches of about `source.batchSize`, ordered by id,
 * NULL ids last (with `omitClean`, only the rows that may matter). Checks the relation and
 * columns first (a `UserError` names the flag to fix).
 *
 * @example
 *   for await (const { rows } of readSource(db, source, { signal })) {
 *     for (const row of rows) if (row.valid && (row.userDisabled || row.adminDisabled)) ...
 *   }
 */
export async function* readSource(
  db: AnyDb,
  source: SourceConfig,
  opts: ReadSourceOptions = {},
): AsyncGenerator<SourceBatch> {
  const src = await resolveSource(db, source, opts.logger);
  let seq = 0;
  let rowsRead = 0;
  const deliver = (page: readonly PageRow[]): SourceBatch => {
    const size = page[0]?.total ?? page.length;
    const copies = new Map<string, number>();
    if (page[0]?.copies === undefined) {
      for (const r of page) if (r.id !== null) copies.set(r.id, (copies.get(r.id) ?? 0) + 1);
    }
    const rows = page.map((r, i) => ({
      seq: seq + (r.rn ?? i + 1),
      ...classifyRow(
        r,
        source.nonUuidIds,
        r.copies ?? (r.id === null ? 1 : (copies.get(r.id) ?? 1)),
      ),
    }));
    seq += size;
    rowsRead += size;
    opts.onBatch?.({ rowsRead, batchRows: size });
    return { rows, rowsRead: size };
  };
  if (opts.omitClean && (src.kind === "r" || src.kind === "m")) {
    const dups = await duplicateIds(db, src);
    if (dups.size <= MAX_PHYSICAL_DUPLICATES) {
      for await (const page of physicalPagesOfInterest(
        db,
        src,
        dups,
        source.batchSize,
        opts.signal,
      )) {
        yield deliver(page);
      }
      return;
    }
  }
  const pages = opts.omitClean ? rangePagesOfInterest : keysetPages;
  for await (const page of pages(db, src, source.batchSize, opts.signal)) yield deliver(page);
  for await (const page of nullIdPages(db, src, source.batchSize, opts.signal)) {
    yield deliver(page);
  }
}

/** Above this many duplicated ids, `omitClean` reads in id order, where copies are neighbours. */
const MAX_PHYSICAL_DUPLICATES = 10_000;

/** The ids held by more than one row, with their number of rows: one hashed scan. */
async function duplicateIds(db: AnyDb, src: ResolvedSource): Promise<Map<string, number>> {
  const id = src.id.ref;
  const r = await sql<{ id: string; copies: number }>`
    select ${id}::text as id, count(*)::int as copies from ${src.table}
    where ${id} is not null group by ${id} having count(*) > 1
    limit ${MAX_PHYSICAL_DUPLICATES + 1}`.execute(db);
  return new Map(r.rows.map((x) => [x.id, Number(x.copies)]));
}

/** A lower-case UUID id and two exact false literals (a boolean false, or such a text). */
function cleanRow(src: ResolvedSource): RawBuilder<unknown> {
  // Cheapest first, by the columns' own types: a boolean flag needs no text, a uuid id is always a
  // lower-case UUID as text, and the regular expression (most of the cost) runs last, if at all.
  const falseFlag = (col: SourceColumn) =>
    col.type === "boolean"
      ? sql`${col.ref} is false`
      : sql`lower(${col.ref}::text) = any(${FALSE_FLAG_TEXTS}::text[])`;
  const id = src.id.type === "uuid" ? sql`true` : sql`${src.id.ref}::text ~ ${LOWER_UUID_PATTERN}`;
  return sql`coalesce(${falseFlag(src.userDisabled)} and ${falseFlag(src.adminDisabled)} and ${id}, false)`;
}

/**
 * `omitClean` on a table or materialized view: the rows in the order they are stored, a page being
 * a range of blocks (a TID range scan, so the heap is read once, in order, instead of once per id
 * through the index). Copies of an id can be anywhere, so the ids held by several rows are found
 * first (`duplicateIds`) and every row of them is sent. A page's last row is always sent: it
 * carries the page's row count. NULL ids are never clean, so they come in their place.
 */
async function* physicalPagesOfInterest(
  db: AnyDb,
  src: ResolvedSource,
  dups: Map<string, number>,
  n: number,
  signal?: AbortSignal,
): AsyncGenerator<PageRow[]> {
  const cols = selectedColumns(src);
  const { table } = src;
  const blockSize = await sql<{ blocks: number }>`
    select (pg_relation_size(format('%I.%I', ${src.schema}::text, ${src.name}::text)::regclass)
            / current_setting('block_size')::int)::int as blocks
  `.execute(db);
  // The relation's size when the pass starts: do not change it during a run (see above).
  const blocks = Number(blockSize.rows[0]?.blocks ?? 0);
  const dupIds = [...dups.keys()];
  let step = 8;
  for (let from = 0; from < blocks; ) {
    signal?.throwIfAborted();
    const to = Math.min(blocks, from + step);
    const upper = to >= blocks ? sql`` : sql`and ${table}.ctid < ${`(${to},0)`}::tid`;
    const page = await rowsOf(
      db,
      sql`select p.id, p."userDisabled", p."adminDisabled", p.rn::int as rn, p.total::int as total
          from (
            select ${cols}, ${cleanRow(src)} as clean,
                   row_number() over (order by ${table}.ctid) as rn, count(*) over () as total
            from ${table} where ${table}.ctid >= ${`(${from},0)`}::tid ${upper}
          ) p
          where p.rn = p.total or not p.clean or p.id = any(${dupIds}::text[])
          order by p.rn`,
    );
    const rows = page.map((r) => ({ ...r, copies: r.id === null ? 1 : (dups.get(r.id) ?? 1) }));
    if (rows.length > 0) yield rows;
    // Aim at `n` rows sent a page, whatever the rows per block and the share of clean rows (a
    // page of a table of clean rows spans more blocks); grow at most fourfold a page, so a run of
    // clean or empty blocks never makes the next page huge.
    from = to;
    step = Math.max(1, Math.min(step * 4, Math.round((step * n) / Math.max(page.length, 1))));
  }
}

/**
 * Pages of the rows with an id, in id order. Keyset on a non-unique key would skip the copies of
 * an id that straddle a page boundary, so a full page's trailing id group is re-read whole.
 */
async function* keysetPages(
  db: AnyDb,
  src: ResolvedSource,
  n: number,
  signal?: AbortSignal,
): AsyncGenerator<PageRow[]> {
  const cols = selectedColumns(src);
  const { table } = src;
  const id = src.id.ref;
  let last: string | null = null;
  for (;;) {
    signal?.throwIfAborted();
    const after = last === null ? sql`` : sql`and ${id} > ${last}`;
    let page = await rowsOf(
      db,
      sql`select ${cols} from ${table} where ${id} is not null ${after} order by ${id} limit ${n}`,
    );
    if (page.length === 0) return;
    const full = page.length === n;
    if (full) {
      const boundary = page[page.length - 1]!.id!;
      let cut = page.length;
      while (cut > 0 && page[cut - 1]!.id === boundary) cut--;
      const group = await rowsOf(db, sql`select ${cols} from ${table} where ${id} = ${boundary}`);
      page = page.slice(0, cut).concat(group);
    }
    last = page[page.length - 1]!.id;
    yield page;
    if (!full) return;
  }
}

/**
 * `keysetPages` with the clean rows left in the database (see `omitClean`). Each page is the id
 * range (last, hi], hi being the `n`-th id after `last`, so every copy of hi is in it. Its last
 * row is always sent, clean or not: it carries hi and the page's row count.
 */
async function* rangePagesOfInterest(
  db: AnyDb,
  src: ResolvedSource,
  n: number,
  signal?: AbortSignal,
): AsyncGenerator<PageRow[]> {
  const cols = selectedColumns(src);
  const { table } = src;
  const id = src.id.ref;
  let last: string | null = null;
  for (;;) {
    signal?.throwIfAborted();
    const after = last === null ? sql`` : sql`and ${id} > ${last}`;
    const page = await rowsOf(
      db,
      sql`with r as (select ${id} as k from ${table} where ${id} is not null ${after}
                     order by ${id} limit ${n}),
               b as (select max(k) as hi, count(*)::int as got from r)
          select p.id, p."userDisabled", p."adminDisabled",
                 p.copies::int as copies, p.rn::int as rn, p.total::int as total, b.got
          from b cross join lateral (
            select ${cols}, ${cleanRow(src)} as clean, count(*) over (partition by ${id}) as copies,
                   row_number() over (order by ${id}) as rn, count(*) over () as total
            from ${table} where ${id} is not null ${after} and ${id} <= b.hi
          ) p
          where p.copies > 1 or p.rn = p.total or not p.clean
          order by p.rn`,
    );
    if (page.length === 0) return;
    last = page[page.length - 1]!.id;
    yield page;
    if ((page[0] as PageRow & { got: number }).got < n) return;
  }
}

/**
 * NULL ids sort outside any keyset: on tables and materialized views they are read by ctid keyset
 * (a TID range scan); on views and partitioned or foreign tables, which have no usable ctid, by
 * LIMIT/OFFSET ordered by every selected column, exact because rows tied on every column are
 * indistinguishable to us.
 */
async function* nullIdPages(
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

export interface SourceCounts {
  readonly total: number;
  readonly userDisabled: number;
  readonly adminDisabled: number;
  /** Rows with either flag true. */
  readonly anyFlag: number;
}

/**
 * Counts the source rows and the rows with each flag true, with the reader's notion of "true"
 * (so a text 'yes' counts). One scan of the relation; used for progress totals and reports.
 *
 * @example
 *   const { total, anyFlag } = await countSource(db, source);
 */
export async function countSource(db: AnyDb, source: SourceConfig): Promise<SourceCounts> {
  const src = await resolveSource(db, source);
  const ud = isTrue(src.userDisabled);
  const ad = isTrue(src.adminDisabled);
  const row = await sql<{ total: number; ud: number; ad: number; any: number }>`
    select count(*) as total, count(*) filter (where ${ud}) as ud,
           count(*) filter (where ${ad}) as ad, count(*) filter (where ${ud} or ${ad}) as any
    from ${src.table}`
    .execute(db)
    .then((r) => r.rows[0]!);
  return {
    total: Number(row.total),
    userDisabled: Number(row.ud),
    adminDisabled: Number(row.ad),
    anyFlag: Number(row.any),
  };
}

const LOOKUP_CHUNK = 1000;
const UUID_ANY_CASE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The source rows of specific ids, classified like the reader does: a map from id to every row
 * holding it (two or more rows mean `duplicate_id`). Ids absent from the source are absent from
 * the map. Keys are the ids as the database prints them (a uuid column prints lower-case).
 *
 * @example
 *   const found = await lookupSourceRows(db, source, ["7d1c…", "a0b2…"]);
 *   const rows = found.get("7d1c…"); // undefined when the identity is not in the source
 */
export async function lookupSourceRows(
  db: AnyDb,
  source: SourceConfig,
  ids: readonly string[],
): Promise<Map<string, ClassifiedRow[]>> {
  const out = new Map<string, ClassifiedRow[]>();
  if (ids.length === 0) return out;
  const src = await resolveSource(db, source);
  const cols = selectedColumns(src);
  const isUuid = src.id.type === "uuid";
  // A uuid column cannot equal a non-UUID string, and casting one to uuid[] would fail.
  const wanted = [...new Set(isUuid ? ids.filter((i) => UUID_ANY_CASE.test(i)) : ids)];
  for (let i = 0; i < wanted.length; i += LOOKUP_CHUNK) {
    const chunk = wanted.slice(i, i + LOOKUP_CHUNK);
    const match = isUuid
      ? sql`${src.id.ref} = any(${chunk}::uuid[])`
      : sql`${src.id.ref}::text = any(${chunk}::text[])`;
    const rows = await rowsOf(db, sql`select ${cols} from ${src.table} where ${match}`);
    const copies = new Map<string, PageRow[]>();
    for (const r of rows) copies.set(r.id!, [...(copies.get(r.id!) ?? []), r]);
    for (const [key, group] of copies) {
      out.set(
        key,
        group.map((r) => classifyRow(r, source.nonUuidIds, group.length)),
      );
    }
  }
  return out;
}

function selectedColumns(src: ResolvedSource): RawBuilder<unknown> {
  return sql`${src.id.ref}::text as id, ${src.userDisabled.ref}::text as "userDisabled",
             ${src.adminDisabled.ref}::text as "adminDisabled"`;
}

function isTrue(col: SourceColumn): RawBuilder<unknown> {
  return col.type === "boolean"
    ? sql`${col.ref} is true`
    : sql`lower(btrim(${col.ref}::text)) = any(${TRUE_FLAG_TEXTS}::text[])`;
}

async function rowsOf(db: AnyDb, query: RawBuilder<unknown>): Promise<PageRow[]> {
  const result = await (query as RawBuilder<PageRow>).execute(db);
  return result.rows;
}
