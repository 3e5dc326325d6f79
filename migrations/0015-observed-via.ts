import { type Kysely, sql } from "kysely";

/**
 * How a run observed each identity, recorded as it observes it (issue 50 §1):
 * `snapshot_identities.observed_via` is `listing` for an identity a listing page showed (complete
 * or filtered: the run's strategy says which) and `by_id` for one read by its id (its controls or
 * the identity itself); null for a read that failed, and for a row of an older version. An
 * identity a run needed and has no row of was not read. Summary's `coverage.observed_by` counts
 * these rows. A nullable column without a default: adding it rewrites nothing.
 *
 * `carried_findings`: what a writing run did not observe keeps its last known state (issue 50
 * §4). Per identity the run did not read and the run it was compared with knew of: each finding
 * that run knew (`finding`, its owner `owner`, `legacy_unread` when the platform's legacy fields
 * were not read), or one row with `finding` null for an identity known clean, and the run that
 * last observed it (`seen_by_run_id`). A row of identity '' says every other identity was last
 * observed clean by `seen_by_run_id` (a complete listing's ground carried on). The next run is
 * compared with these where it reads what this one did not. A bulk per-run table: no foreign key
 * to `runs`, as 0006 has it for the others.
 *
 * Names are written literally: a migration is a record of its day and never changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table controls_migration.snapshot_identities
    add column observed_via text null check (observed_via in ('listing', 'by_id'))`.execute(db);
  await sql`
    create table controls_migration.carried_findings (
      run_id text not null,
      identity_id text not null,
      finding text null,
      owner text not null default '',
      legacy_unread boolean not null default false,
      seen_by_run_id text not null
    )`.execute(db);
  await sql`create index carried_findings_run_identity_idx
    on controls_migration.carried_findings (run_id, identity_id)`.execute(db);
}
