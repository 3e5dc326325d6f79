import { type Kysely, sql } from "kysely";

/**
 * - `listed_bare`: the identities a complete listing showed bare (no active control, both legacy
 *   fields false), in numbered chunks: lower-case UUIDs packed in `uuids`, 16 bytes each in the
 *   UUID's own byte order, any other id in `others`. Such identities are not in the snapshot (they
 *   matter to no finding of the run), so without this a later `--since-last` run (issue 55) could
 *   not tell a candidate the complete run saw bare from one it never saw, and read every
 *   candidate whose source row changed by id. A chunk lost with a crash only costs such reads:
 *   membership is evidence, absence is none. No foreign key (a million ids a complete run).
 *
 * Names are written literally: a migration is a record of its day and never changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table controls_migration.listed_bare (
      run_id text not null,
      chunk integer not null,
      uuids bytea not null,
      others text[] not null,
      primary key (run_id, chunk)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table controls_migration.listed_bare`.execute(db);
}
