import { type Kysely, sql } from "kysely";

/**
 * What a run's life needs in typed columns instead of JSON read back with casts:
 * - `runs.source_rows_read|source_candidates|source_anomalies` and `runs.strategy`: what a resumed
 *   run reports (before, read back from `counts` and `summary` JSON);
 * - `runs.error`: why a run failed or was closed;
 * - two run statuses: `declined` (the writes were not confirmed, nothing was written) and
 *   `discarded` (given up on purpose with `controls-migrate discard`);
 * - `findings.prunable`: the diff rules' verdict, stored with the finding so that reports read it
 *   instead of re-deriving it.
 *
 * Existing rows are backfilled from the JSON they carried and, for `prunable`, with the rule the
 * diff rules applied when they were written (an unexpected, overridable, client-set SELL_ONLY).
 * Names are written literally: a migration is a record of its day and never changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table controls_migration.runs
      add column source_rows_read bigint null,
      add column source_candidates bigint null,
      add column source_anomalies bigint null,
      add column strategy text null,
      add column error text null`.execute(db);
  await sql`
    update controls_migration.runs set
      source_rows_read = (counts ->> 'source_rows_read')::bigint,
      source_candidates = (counts ->> 'source_candidates')::bigint,
      source_anomalies = (counts ->> 'source_anomalies')::bigint
    where counts ? 'source_rows_read'`.execute(db);
  await sql`
    update controls_migration.runs set strategy = summary ->> 'strategy'
    where summary is not null and jsonb_typeof(summary) = 'object'`.execute(db);

  // 0001 declared the check inline; PostgreSQL named it <table>_<column>_check.
  await sql`alter table controls_migration.runs drop constraint runs_status_check`.execute(db);
  await sql`
    alter table controls_migration.runs add constraint runs_status_check check (
      status in ('running', 'completed', 'failed', 'interrupted', 'declined', 'discarded'))`.execute(
    db,
  );

  await sql`
    alter table controls_migration.findings
      add column prunable boolean not null default false`.execute(db);
  await sql`
    update controls_migration.findings set prunable = true
    where finding = 'unexpected_client_control'
      and upper(observed_set_by) in ('CLIENT', 'SET_BY_CLIENT')
      and observed_is_overridable`.execute(db);
}
