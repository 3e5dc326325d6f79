import { type Kysely, sql } from "kysely";
import { type Database, type Finding, TOOL_TABLES } from "../schema.ts";

/** What one run knows about one identity (`controls-migrate show`). */
export interface IdentityInRun {
  readonly run_id: string;
  readonly mode: string;
  readonly status: string;
  readonly exit_code: number | null;
  readonly started_at: Date;
  readonly finished_at: Date | null;
  /** The source rows stored for it: flagged or anomalous rows (clean rows are not stored). */
  readonly source: {
    seq: number;
    user_disabled: boolean | null;
    admin_disabled: boolean | null;
    anomaly: string | null;
    anomaly_detail: string | null;
    valid: boolean | null;
  }[];
  /** How the platform answered for it, if the run read it. */
  readonly platform: {
    status: string;
    error: string | null;
    observed_at: string;
    /** The platform's legacy fields as read (0008); null: not read. */
    user_disabled?: boolean | null;
    admin_disabled?: boolean | null;
  } | null;
  /** The active controls the run observed on the platform. */
  readonly controls: {
    control_id: string;
    type: string;
    set_by: string;
    is_overridable: boolean;
    reason_code: string | null;
    created_at: string | null;
  }[];
  readonly findings: Pick<
    Finding,
    | "finding"
    | "expected_type"
    | "expected_set_by"
    | "expected_is_overridable"
    | "observed_control_id"
    | "observed_set_by"
    | "observed_is_overridable"
    | "other_active_controls"
    | "detail"
  >[];
  /** What changed outside the tool since the previous writing run (0009), as this run saw it. */
  readonly outside_changes: {
    change: string;
    since_run_id: string;
    control_id: string | null;
    set_by: string | null;
    undone: boolean;
    detail: string | null;
    seen_at: string;
  }[];
  /** The journal's actions on it, newest first. */
  readonly actions: {
    action: string;
    control_type: string;
    control_key: string;
    status: string;
    outcome: string | null;
    attempts: number;
    http_status: number | null;
    error: string | null;
    result_control_id: string | null;
    updated_at: string;
  }[];
}

const parsed = <T>(v: unknown): T => (typeof v === "string" ? JSON.parse(v) : v) as T;

/**
 * One page of an identity's history, newest run first: the runs that stored anything about it,
 * each with its source rows, platform answer, observed controls, findings and actions. Keyset by
 * `(started_at, id)` after the run `beforeRunId` (index `runs_started_at_id_idx`; the cursor is
 * read in SQL, so timestamps keep their microseconds); within a run every lookup is an index probe
 * on the `(run_id, identity_id)` keys the run tables already have, so the cost grows with the
 * runs walked, never with the identities a run holds.
 *
 * @example
 *   const page = await identityHistoryPage(db, "5b3c…", null, 20);
 *   const older = await identityHistoryPage(db, "5b3c…", page.at(-1)?.run_id ?? null, 20);
 */
export async function identityHistoryPage(
  db: Kysely<Database>,
  identityId: string,
  beforeRunId: string | null,
  limit: number,
): Promise<IdentityInRun[]> {
  const t = TOOL_TABLES;
  const r = await sql<IdentityInRun>`
    select r.id as run_id, r.mode, r.status, r.exit_code, r.started_at, r.finished_at,
      coalesce((
        select json_agg(json_build_object('seq', s.seq, 'user_disabled', s.user_disabled,
          'admin_disabled', s.admin_disabled, 'anomaly', s.anomaly,
          'anomaly_detail', s.anomaly_detail, 'valid', s.valid) order by s.seq)
        from ${sql.table(t.sourceRows)} s where s.run_id = r.id and s.identity_id = ${identityId}
      ), '[]'::json) as source,
      (
        select json_build_object('status', si.status, 'error', si.error, 'observed_at', si.observed_at,
          'user_disabled', si.platform_user_disabled, 'admin_disabled', si.platform_admin_disabled)
        from ${sql.table(t.snapshotIdentities)} si
        where si.run_id = r.id and si.identity_id = ${identityId}
      ) as platform,
      coalesce((
        select json_agg(json_build_object('control_id', c.control_id, 'type', c.type,
          'set_by', c.set_by_raw, 'is_overridable', c.is_overridable,
          'reason_code', c.reason_code, 'created_at', c.created_at) order by c.control_id)
        from ${sql.table(t.snapshotControls)} c
        where c.run_id = r.id and c.identity_id = ${identityId} and c.deleted_at is null
      ), '[]'::json) as controls,
      coalesce((
        select json_agg(json_build_object('finding', f.finding, 'expected_type', f.expected_type,
          'expected_set_by', f.expected_set_by, 'expected_is_overridable', f.expected_is_overridable,
          'observed_control_id', f.observed_control_id, 'observed_set_by', f.observed_set_by,
          'observed_is_overridable', f.observed_is_overridable,
          'other_active_controls', f.other_active_controls, 'detail', f.detail) order by f.id)
        from ${sql.table(t.findings)} f where f.run_id = r.id and f.identity_id = ${identityId}
      ), '[]'::json) as findings,
      coalesce((
        select json_agg(json_build_object('action', a.action, 'control_type', a.control_type,
          'control_key', a.control_key, 'status', a.status, 'outcome', a.outcome,
          'attempts', a.attempts, 'http_status', a.http_status, 'error', a.error,
          'result_control_id', a.result_control_id, 'updated_at', a.updated_at) order by a.id desc)
        from ${sql.table(t.actions)} a where a.run_id = r.id and a.identity_id = ${identityId}
      ), '[]'::json) as actions,
      coalesce((
        select json_agg(json_build_object('change', w.kind, 'since_run_id', w.since_run_id,
          'control_id', w.control_id, 'set_by', w.set_by, 'undone', w.undone, 'detail', w.detail,
          'seen_at', w.seen_at) order by w.kind, w.control_id)
        from ${sql.table(t.worldChanges)} w where w.run_id = r.id and w.identity_id = ${identityId}
      ), '[]'::json) as outside_changes
    from ${sql.table(t.runs)} r
    where ${
      beforeRunId === null
        ? sql`true`
        : sql`(r.started_at, r.id) < (
            select b.started_at, b.id from ${sql.table(t.runs)} b where b.id = ${beforeRunId})`
    }
      and ${storedAbout(identityId)}
    order by r.started_at desc, r.id desc
    limit ${limit}`.execute(db);
  return r.rows.map(decoded);
}

/** Whether the run `r` stored anything about the identity, in any of its tables. */
function storedAbout(identityId: string) {
  const t = TOOL_TABLES;
  return sql`(
        exists (select 1 from ${sql.table(t.sourceRows)} s
                where s.run_id = r.id and s.identity_id = ${identityId})
        or exists (select 1 from ${sql.table(t.snapshotIdentities)} si
                   where si.run_id = r.id and si.identity_id = ${identityId})
        or exists (select 1 from ${sql.table(t.snapshotControls)} c
                   where c.run_id = r.id and c.identity_id = ${identityId})
        or exists (select 1 from ${sql.table(t.findings)} f
                   where f.run_id = r.id and f.identity_id = ${identityId})
        or exists (select 1 from ${sql.table(t.actions)} a
                   where a.run_id = r.id and a.identity_id = ${identityId})
        or exists (select 1 from ${sql.table(t.worldChanges)} w
                   where w.run_id = r.id and w.identity_id = ${identityId})
      )`;
}

/** A row as the driver returns it (JSON as text on some, dates as strings) made typed. */
const decoded = (row: IdentityInRun): IdentityInRun => ({
  ...row,
  started_at: new Date(row.started_at),
  finished_at: row.finished_at === null ? null : new Date(row.finished_at),
  source: parsed(row.source),
  platform: parsed(row.platform),
  controls: parsed(row.controls),
  findings: parsed(row.findings),
  actions: parsed(row.actions),
  outside_changes: parsed(row.outside_changes),
});
