/**
 * The diff report's rows: a run's findings with the latest journal entry of each, the platform's
 * legacy fields included, read a page at a time the way each backend is fastest.
 */
import { type Kysely, sql } from "kysely";
import { isEmbedded } from "./embedded.ts";
import { type Database, type Finding, TOOL_TABLES } from "./schema.ts";

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
    select f.id, f.run_id, f.identity_id, f.user_disabled, f.admin_disabled,
      f.platform_user_disabled, f.platform_admin_disabled, f.finding,
      f.expected_type, f.expected_set_by, f.expected_is_overridable,
      coalesce(f.observed_control_id, a.result_control_id) as observed_control_id,
      f.observed_set_by, f.observed_is_overridable, f.other_active_controls, f.detail, f.prunable,
      a.action, a.status, a.outcome, a.http_status, a.error, a.attempts, a.updated_at as at
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
      select coalesce(json_agg(json_build_array(
        q.id, q.run_id, q.identity_id, q.user_disabled, q.admin_disabled,
        q.platform_user_disabled, q.platform_admin_disabled, q.finding,
        q.expected_type, q.expected_set_by, q.expected_is_overridable, q.observed_control_id,
        q.observed_set_by, q.observed_is_overridable, q.other_active_controls, q.detail, q.prunable,
        q.action, q.status, q.outcome, q.http_status, q.error, q.attempts,
        floor(extract(epoch from q.at) * 1000)
      ) order by q.id), '[]')::text as page
      from (${page(after, rows)}) q
    `.execute(db);
    const tuples = JSON.parse(r.rows[0]?.page ?? "[]") as DiffTuple[];
    for (const t of tuples) out.push(diffRecord(t));
    if (tuples.length < rows) break;
    after = (tuples[tuples.length - 1] as DiffTuple)[0];
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

/** A {@link diffPage} row as its JSON array: the columns in the select's order. */
type DiffTuple = [
  number,
  string,
  string | null,
  boolean | null,
  boolean | null,
  boolean | null,
  boolean | null,
  string,
  string | null,
  string | null,
  boolean | null,
  string | null,
  string | null,
  boolean | null,
  string | null,
  string | null,
  boolean,
  string | null,
  string | null,
  string | null,
  number | null,
  string | null,
  number | null,
  number | null,
];

function diffRecord(t: DiffTuple): DiffRecord {
  return {
    id: t[0],
    run_id: t[1],
    identity_id: t[2],
    user_disabled: t[3],
    admin_disabled: t[4],
    platform_user_disabled: t[5],
    platform_admin_disabled: t[6],
    finding: t[7],
    expected_type: t[8],
    expected_set_by: t[9],
    expected_is_overridable: t[10],
    observed_control_id: t[11],
    observed_set_by: t[12],
    observed_is_overridable: t[13],
    other_active_controls: t[14],
    detail: t[15],
    prunable: t[16],
    action: t[17],
    status: t[18],
    outcome: t[19],
    http_status: t[20],
    error: t[21],
    attempts: t[22],
    at: t[23] === null ? null : new Date(t[23]),
  };
}
