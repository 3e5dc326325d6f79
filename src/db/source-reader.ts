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
  type RawSourceRow,
  TRUE_FLAG_TEXTS,
} from "./source-anomalies.ts";
import { type ResolvedSource, resolveSource, type SourceColumn } from "./source-relation.ts";

export type { AnomalyKind, ClassifiedRow } from "./source-anomalies.ts";
export { ANOMALY_KIND_NAMES, ANOMALY_KINDS } from "./source-anomalies.ts";

// biome-ignore lint/suspicious/noExplicitAny: the source relation is the user's, not in our types
type AnyDb = Kysely<any>;

/** One source row, classified. `seq` is the 1-based order of delivery. */
export interface SourceRow extends ClassifiedRow {
  readonly seq: number;
}

export interface SourceBatch {
  readonly rows: SourceRow[];
}

export interface ReadSourceOptions {
  /** Checked before each page; when aborted the generator throws the signal's reason. */
  readonly signal?: AbortSignal;
  /** Receives the "no index on the id column" warning. */
  readonly logger?: Logger;
  /** Called after each page, before it is yielded (progress). */
  onBatch?(progress: { readonly rowsRead: number; readonly batchRows: number }): void;
}

interface PageRow extends RawSourceRow {
  readonly rowCtid?: string;
}

/**
 * Yields every row of the source relation in batches of about `source.batchSize`, ordered by id,
 * NULL ids last. Checks the relation and columns first (a `UserError` names the flag to fix).
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
  const cols = selectedColumns(src);
  const { table } = src;
  const id = src.id.ref;
  const n = source.batchSize;
  let seq = 0;
  let rowsRead = 0;

  const deliver = (page: readonly PageRow[]): SourceBatch => {
    const copies = new Map<string, number>();
    for (const r of page) if (r.id !== null) copies.set(r.id, (copies.get(r.id) ?? 0) + 1);
    const rows = page.map((r) => ({
      seq: ++seq,
      ...classifyRow(r, source.nonUuidIds, r.id === null ? 1 : (copies.get(r.id) ?? 1)),
    }));
    rowsRead += rows.length;
    opts.onBatch?.({ rowsRead, batchRows: rows.length });
    return { rows };
  };

  let last: string | null = null;
  for (;;) {
    opts.signal?.throwIfAborted();
    const after = last === null ? sql`` : sql`and ${id} > ${last}`;
    let page = await rowsOf(
      db,
      sql`select ${cols} from ${table} where ${id} is not null ${after} order by ${id} limit ${n}`,
    );
    if (page.length === 0) break;
    const full = page.length === n;
    if (full) {
      const boundary = page[page.length - 1]!.id!;
      let cut = page.length;
      while (cut > 0 && page[cut - 1]!.id === boundary) cut--;
      const group = await rowsOf(db, sql`select ${cols} from ${table} where ${id} = ${boundary}`);
      page = page.slice(0, cut).concat(group);
    }
    last = page[page.length - 1]!.id;
    yield deliver(page);
    if (!full) break;
  }

  if (src.kind === "r" || src.kind === "m") {
    let lastCtid = "(0,0)"; // item numbers start at 1, so this precedes every tuple
    for (;;) {
      opts.signal?.throwIfAborted();
      const page = await rowsOf(
        db,
        sql`select ${table}.ctid::text as "rowCtid", ${cols} from ${table}
            where ${id} is null and ${table}.ctid > ${lastCtid}::tid
            order by ${table}.ctid limit ${n}`,
      );
      if (page.length === 0) break;
      lastCtid = page[page.length - 1]!.rowCtid!;
      yield deliver(page);
      if (page.length < n) break;
    }
  } else {
    const ud = src.userDisabled.ref;
    const ad = src.adminDisabled.ref;
    for (let offset = 0; ; offset += n) {
      opts.signal?.throwIfAborted();
      const page = await rowsOf(
        db,
        sql`select ${cols} from ${table} where ${id} is null
            order by ${ud} nulls first, ${ad} nulls first limit ${n} offset ${offset}`,
      );
      if (page.length === 0) break;
      yield deliver(page);
      if (page.length < n) break;
    }
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
