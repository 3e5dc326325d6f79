import { type Kysely, sql } from "kysely";

/**
 * Operating a long run (issue 14): watching it, steering it, and reverting it.
 * - `run_controls`: one row per run that someone steered, holding the desired state (`paused`, the
 *   write `rate_budget`) with a `version` bumped by each change; the running process polls it,
 *   applies it, and acknowledges with `applied_version`. It also leaves there, once a second, what
 *   only it knows (`report`: write rate over the last minute, 429s, retries, ambiguous outcomes,
 *   why writes are held), so `status` works from any machine that reaches the database.
 * - `run_events`: every pause, continue and rate change, and every throttle-file or time-window
 *   hold, with who (user@host and pid), when and what; summary.md lists them.
 * - runs of mode `revert` (undo what an apply or reconcile wrote), and `runs.dry_run` for a revert
 *   that only wrote its report.
 * Names are written literally: a migration is a record of its day and never changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // 0001 declared the check inline; PostgreSQL named it <table>_<column>_check.
  await sql`alter table controls_migration.runs drop constraint runs_mode_check`.execute(db);
  await sql`
    alter table controls_migration.runs add constraint runs_mode_check check (
      mode in ('plan', 'apply', 'reconcile', 'revert'))`.execute(db);
  await sql`
    alter table controls_migration.runs
      add column dry_run boolean not null default false`.execute(db);

  await sql`
    create table controls_migration.run_controls (
      run_id text primary key references controls_migration.runs (id) on delete cascade,
      paused boolean not null default false,
      rate_budget double precision null check (rate_budget is null or rate_budget > 0),
      version bigint not null default 0,
      applied_version bigint not null default 0,
      applied_at timestamptz null,
      report jsonb null,
      reported_at timestamptz null
    )`.execute(db);

  await sql`
    create table controls_migration.run_events (
      id bigserial primary key,
      run_id text not null references controls_migration.runs (id) on delete cascade,
      at timestamptz not null default now(),
      kind text not null check (kind in (
        'pause', 'continue', 'set_rate', 'throttle_on', 'throttle_off', 'window_closed',
        'window_open')),
      rate double precision null,
      who text not null,
      pid integer null,
      detail text null
    )`.execute(db);
  await sql`create index run_events_run_idx
    on controls_migration.run_events (run_id, id)`.execute(db);
}
