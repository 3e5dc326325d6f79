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
import type { SourceConfig } from "../../config.ts";
import type { Logger } from "../../log.ts";
import { flagTextIsTrue } from "./flag-text.ts";
import { type ClassifiedRow, classifyRow } from "./source-anomalies.ts";
import {
  duplicateIds,
  idKeysetPages,
  MAX_PHYSICAL_DUPLICATES,
  nullIdPages,
  type PageRow,
  physicalPagesOfInterest,
  rowsOf,
  selectedColumns,
} from "./source-pages.ts";
import { resolveSource, type SourceColumn } from "./source-relation.ts";

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
  const deliver = (page: readonly PageRow[], total?: number): SourceBatch => {
    const size = total ?? page[0]?.total ?? page.length;
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
        yield deliver(page.rows, page.total);
      }
      return;
    }
  }
  const pages = idKeysetPages(db, src, source.batchSize, opts.omitClean === true, opts.signal);
  for await (const page of pages) yield deliver(page);
  for await (const page of nullIdPages(db, src, source.batchSize, opts.signal)) {
    yield deliver(page);
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

/** The reader's notion of a true flag (a text 'yes' counts), as SQL. */
export function isTrue(col: SourceColumn): RawBuilder<unknown> {
  return col.type === "boolean" ? sql`${col.ref} is true` : flagTextIsTrue(col.ref);
}
