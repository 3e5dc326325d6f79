import { type Kysely, sql } from "kysely";

/**
 * The tool's tables, all in schema `controls_migration`. Every per-run table references `runs`
 * with `on delete cascade`, so deleting a run removes everything it wrote. Status-like columns carry
 * CHECK constraints: a typo in the pipeline fails loudly at the first insert, not in a report.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create schema if not exists controls_migration`.execute(db);

  await sql`
    create table controls_migration.runs (
      id text primary key,
      mode text not null check (mode in ('plan', 'apply', 'reconcile')),
      status text not null check (status in ('running', 'completed', 'failed', 'interrupted')),
      parent_run_id text null references controls_migration.runs (id),
      started_at timestamptz not null default now(),
      finished_at timestamptz null,
      heartbeat_at timestamptz null,
      options jsonb not null default '{}',
      counts jsonb not null default '{}',
      summary jsonb null,
      exit_code integer null,
      tool_version text not null,
      host text not null,
      pid integer not null
    )`.execute(db);
  await sql`create index runs_started_at_idx on controls_migration.runs (started_at)`.execute(db);
  await sql`create index runs_parent_run_id_idx on controls_migration.runs (parent_run_id)`.execute(
    db,
  );

  await sql`
    create table controls_migration.source_rows (
      run_id text not null references controls_migration.runs (id) on delete cascade,
      seq bigint not null,
      identity_id text null,
      user_disabled boolean null,
      admin_disabled boolean null,
      anomaly text null,
      anomaly_detail text null,
      valid boolean null,
      primary key (run_id, seq)
    )`.execute(db);
  await sql`create index source_rows_run_identity_idx
    on controls_migration.source_rows (run_id, identity_id)`.execute(db);

  await sql`
    create table controls_migration.snapshot_identities (
      run_id text not null references controls_migration.runs (id) on delete cascade,
      identity_id text not null,
      status text not null check (status in ('found', 'not_found', 'error')),
      error text null,
      observed_at timestamptz not null default now(),
      primary key (run_id, identity_id)
    )`.execute(db);

  await sql`
    create table controls_migration.snapshot_controls (
      run_id text not null references controls_migration.runs (id) on delete cascade,
      identity_id text not null,
      control_id text not null,
      type text not null,
      set_by text not null check (set_by in ('client', 'service', 'unknown')),
      set_by_raw text not null,
      is_overridable boolean not null,
      reason_code text null,
      reason text null,
      created_at timestamptz null,
      deleted_at timestamptz null,
      primary key (run_id, control_id)
    )`.execute(db);
  await sql`create index snapshot_controls_run_identity_idx
    on controls_migration.snapshot_controls (run_id, identity_id)`.execute(db);

  await sql`
    create table controls_migration.findings (
      id bigserial primary key,
      run_id text not null references controls_migration.runs (id) on delete cascade,
      identity_id text null,
      finding text not null,
      user_disabled boolean null,
      admin_disabled boolean null,
      expected_type text null,
      expected_set_by text null,
      expected_is_overridable boolean null,
      observed_control_id text null,
      observed_set_by text null,
      observed_is_overridable boolean null,
      other_active_controls text null,
      detail text null
    )`.execute(db);
  await sql`create index findings_run_finding_idx
    on controls_migration.findings (run_id, finding)`.execute(db);
  await sql`create index findings_run_identity_idx
    on controls_migration.findings (run_id, identity_id)`.execute(db);

  await sql`
    create table controls_migration.actions (
      id bigserial primary key,
      run_id text not null references controls_migration.runs (id) on delete cascade,
      identity_id text not null,
      finding_id bigint null references controls_migration.findings (id) on delete set null,
      action text not null check (action in ('create', 'delete')),
      control_type text not null,
      control_key text not null,
      status text not null check (
        status in ('pending', 'in_flight', 'succeeded', 'failed', 'ambiguous', 'skipped')
      ),
      outcome text null,
      attempts integer not null default 0,
      http_status integer null,
      error text null,
      result_control_id text null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (run_id, identity_id, action, control_key)
    )`.execute(db);
  await sql`create index actions_run_status_idx
    on controls_migration.actions (run_id, status)`.execute(db);
  await sql`create index actions_identity_idx
    on controls_migration.actions (identity_id)`.execute(db);
}
