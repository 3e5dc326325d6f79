/**
 * The diff report's rows: a run's findings with the latest journal entry of each, the platform's
 * legacy fields included, read a page at a time the way each backend is fastest.
 */
import { type Kysely, sql } from "kysely";
import { isEmbedded } from "../connection/embedded.ts";
import { type Database, type Finding, TOOL_TABLES } from "../schema.ts";

/** A finding as stored (`Finding`, the table's own type) with the latest journal entry of it. */
export interface DiffRecord extends Finding {
  action: string | null;
  status: string | null;
  outcome: string | null;
  http_status: number | null;
  error: string | null;
  attempts: number | null;
  at: Date | null;
}

/**
 * The diff row's one definition: each column's name, its expression over the findings `f` and the
 * latest journal entry `a`, and how its JSON value is read back. The select list, the JSON array
 * PGlite's pages come as, and the decoder of that array are all made from this list.
 */
interface DiffColumnDef<K extends keyof DiffRecord = keyof DiffRecord> {
  readonly name: K;
  /** The select expression; by default `f.<name>`. */
  readonly expr?: string;
  /** The JSON array's element; by default `q.<name>`. */
  readonly json?: string;
  /** The JSON value as the record holds it; by default as it is. */
  readonly decode?: (v: unknown) => DiffRecord[K];
}

const col = <K extends keyof DiffRecord>(
  name: K,
  more: Omit<DiffColumnDef<K>, "name"> = {},
): DiffColumnDef => ({ name, ...more }) as DiffColumnDef;

export const DIFF_RECORD_COLUMNS: readonly DiffColumnDef[] = [
  col("id"),
  col("run_id"),
  col("identity_id"),
  col("user_disabled"),
  col("admin_disabled"),
  col("platform_user_disabled"),
  col("platform_admin_disabled"),
  col("finding"),
  col("expected_type"),
  col("expected_set_by"),
  col("expected_is_overridable"),
  col("observed_control_id", { expr: "coalesce(f.observed_control_id, a.result_control_id)" }),
  col("observed_set_by"),
  col("observed_is_overridable"),
  col("other_active_controls"),
  col("detail"),
  col("prunable"),
  col("action", { expr: "a.action" }),
  col("status", { expr: "a.status" }),
  col("outcome", { expr: "a.outcome" }),
  col("http_status", { expr: "a.http_status" }),
  col("error", { expr: "a.error" }),
  col("attempts", { expr: "a.attempts" }),
  col("at", {
    expr: "a.updated_at",
    json: "floor(extract(epoch from q.at) * 1000)",
    decode: (v) => (v === null ? null : new Date(v as number)),
  }),
];

const SELECT_LIST = sql.raw(
  DIFF_RECORD_COLUMNS.map((c) => `${c.expr ?? `f.${c.name}`} as ${c.name}`).join(",\n      "),
);
const JSON_ARRAY = sql.raw(
  `json_build_array(${DIFF_RECORD_COLUMNS.map((c) => c.json ?? `q.${c.name}`).join(", ")})`,
);

/** A row of {@link diffPage}'s JSON page (the columns in {@link DIFF_RECORD_COLUMNS}' order). */
export function decodeDiffTuple(t: readonly unknown[]): DiffRecord {
  // One call that makes the object whole: set key by key, 24 of them turned it into a dictionary
  // (V8's limit for keyed stores), 1.6 kB a record instead of 250 bytes.
  return Object.fromEntries(
    DIFF_RECORD_COLUMNS.map((c, i) => [c.name, c.decode ? c.decode(t[i]) : t[i]]),
  ) as unknown as DiffRecord;
}

/**
 * One page of a run's findings with the latest journal entry of each, keyset by finding id.
 *
 * @example
 *   const page = await diffPage(db, runId, 0, 1000, false);
 */
export async function diffPage(
  db: Kysely<Database>,
  runId: string,
  afterId: number,
  limit: number,
  includeInSync: boolean,
  withActions = true,
): Promise<DiffRecord[]> {
  // A run that journaled nothing (a plan) has no entry to join: the join's probe a finding was
  // most of the report's database time.
  const entry = withActions
    ? sql`left join lateral (
      select * from ${sql.table(TOOL_TABLES.actions)} a
      where a.identity_id = f.identity_id and a.finding_id = f.id
      order by a.id desc limit 1
    ) a on true`
    : sql`left join (select null::text as action, null::text as status, null::text as outcome,
                            null::int as http_status, null::text as error, null::int as attempts,
                            null::text as result_control_id,
                            null::timestamptz as updated_at) a on true`;
  const page = (after: number, rows: number) => sql<DiffRecord>`
    select ${SELECT_LIST}
    from ${sql.table(TOOL_TABLES.findings)} f
    ${entry}
    where f.run_id = ${runId} and f.id > ${after}
      and (${includeInSync} or f.finding <> 'in_sync')
    order by f.id limit ${rows}
  `;
  if (!isEmbedded(db)) {
    const r = await page(afterId, limit).execute(db);
    return r.rows.map((x) => ({ ...x, id: Number(x.id) }));
  }
  // PGlite: each page comes back as one JSON text of row arrays, parsed here in one call. Row by
  // row, PGlite's decoding of each value was most of the report's time: 60,649 rows took 1.9 s,
  // and 0.7 s this way. PostgreSQL is the other way round (0.2–0.3 s by rows, 0.9–1.1 s by JSON).
  const out: DiffRecord[] = [];
  let after = afterId;
  while (out.length < limit) {
    const rows = Math.min(EMBEDDED_JSON_ROWS, limit - out.length);
    const r = await sql<{ page: string }>`
      select coalesce(json_agg(${JSON_ARRAY} order by q.id), '[]')::text as page
      from (${page(after, rows)}) q
    `.execute(db);
    const tuples = JSON.parse(r.rows[0]?.page ?? "[]") as unknown[][];
    for (const t of tuples) out.push(decodeDiffTuple(t));
    if (tuples.length < rows) break;
    after = (out[out.length - 1] as DiffRecord).id;
  }
  return out;
}

/**
 * Rows of one JSON text from PGlite. PGlite gathers an answer in a 1 MB receive buffer; a larger
 * one grows the buffer by half again plus its own size and is copied twice more, and those
 * copies stay in the database thread until a collection: a JSON text of 5000 rows (1.2 MB) left
 * about 4.5 MB each, and a 1,000,000-identity plan's report grew that thread's memory by 15–20 MB.
 * 1000 rows (about 250 KB) stay inside the buffer.
 */
const EMBEDDED_JSON_ROWS = 1000;
