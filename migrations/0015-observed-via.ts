import { type Kysely, sql } from "kysely";

/**
 * How a run observed each identity, recorded as it observes it (issue 50 §1):
 * `snapshot_identities.observed_via` is `listing` for an identity a listing page showed (complete
 * or filtered: the run's strategy says which) and `by_id` for one read by its id (its controls or
 * the identity itself); null for a read that failed, and for a row of an older version. An
 * identity a run needed and has no row of was not read. Summary's `coverage.observed_by` counts
 * these rows. A nullable column without a default: adding it rewrites nothing.
 *
 * Names are written literally: a migration is a record of its day and never changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table controls_migration.snapshot_identities
    add column observed_via text null check (observed_via in ('listing', 'by_id'))`.execute(db);
}
