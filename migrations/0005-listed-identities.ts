import { type Kysely, sql } from "kysely";

/**
 * - `listed_identities`: where a listing puts the identities it reads before the run's source rows
 *   are stored, when it cannot yet tell which of them the run needs. A bare heap (no index, no
 *   foreign key): a row costs a sixth of a `snapshot_identities` row, and at 1,000,000 identities
 *   that was most of the database's work. Once the source rows are stored, the identities they
 *   hold move to `snapshot_identities` in one statement and the run's rows here are deleted.
 *
 * Names are written literally: a migration is a record of its day and never changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table controls_migration.listed_identities (
      run_id text not null,
      identity_id text not null
    )`.execute(db);
}
