import { type Kysely, sql } from "kysely";

/**
 * - `listed_claims`: the listed identities a run has classified, for the ids its in-memory source
 *   index does not hold (a source too large for it). A page claims its identities here with
 *   `on conflict do nothing`, so an identity the listing serves again, on any page, is classified
 *   once: the database's unique key decides between pages classified side by side. `batch` names
 *   the statement that claimed a row, so the statement sent again after a lost answer answers the
 *   same. No foreign key (a million rows at a time); a run's rows are deleted once its findings are
 *   complete.
 *
 * Names are written literally: a migration is a record of its day and never changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table controls_migration.listed_claims (
      run_id text not null,
      identity_id text not null,
      batch integer not null,
      primary key (run_id, identity_id)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table controls_migration.listed_claims`.execute(db);
}
