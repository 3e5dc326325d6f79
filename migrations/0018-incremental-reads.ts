import { type Kysely, sql } from "kysely";

/**
 * A run that reads only what changed since the last complete observation (`--since-last`,
 * issue 55). `runs.since_at` is the `updated_at.gte` bound its listing asked for, null for a run
 * that read the platform whole; `runs.since_run_id` the complete run it built on, and
 * `runs.view_run_id` the run whose observations it carried forward (the last whole view: that
 * complete run or a later incremental one). `snapshot_identities.observed_via` gains `carried`:
 * an identity the run did not read keeps its last observed state, and `observed_run_id` names
 * the run that observed it (null: this run). Nullable columns without defaults: adding them
 * rewrites nothing.
 *
 * Names are written literally: a migration is a record of its day and never changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table controls_migration.runs
    add column since_at timestamptz null,
    add column since_run_id text null,
    add column view_run_id text null`.execute(db);
  await sql`alter table controls_migration.snapshot_identities
    drop constraint if exists snapshot_identities_observed_via_check,
    add constraint snapshot_identities_observed_via_check
      check (observed_via in ('listing', 'by_id', 'carried')),
    add column observed_run_id text null`.execute(db);
}
