import { type Kysely, sql } from "kysely";

/**
 * One run, one world (issue 51): what a run is bound to, resolved when it starts.
 *
 * - `runs.source_relation` / `source_oid` / `source_database`: the source relation as the
 *   database resolved it (schema-qualified name and object id) and the database's identity
 *   (`system_identifier` where readable with `current_database()`, or PGlite's data folder). A
 *   resume, or an apply of a plan, refuses a source that resolves elsewhere (another search_path
 *   names another relation with the same text). Null for a run of an older version.
 * - `runs.platform_key`: the platform the run reads and writes (its API URL and token URL,
 *   normalised, with the client id). Null for a run of an older version.
 * - `platform_wait_sightings.platform_key`: a first sighting belongs to one platform; the key
 *   joins the primary key. Sightings recorded before (key '') belong to no platform and are
 *   never used: a wait starts afresh.
 *
 * Names are written literally: a migration is a record of its day and never changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table controls_migration.runs
    add column source_relation text null,
    add column source_oid bigint null,
    add column source_database text null,
    add column platform_key text null`.execute(db);
  await sql`alter table controls_migration.platform_wait_sightings
    add column platform_key text not null default ''`.execute(db);
  await sql`alter table controls_migration.platform_wait_sightings
    drop constraint platform_wait_sightings_pkey,
    add primary key (platform_key, identity_id, flag)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from controls_migration.platform_wait_sightings where platform_key <> ''`.execute(
    db,
  );
  await sql`alter table controls_migration.platform_wait_sightings
    drop constraint platform_wait_sightings_pkey,
    add primary key (identity_id, flag)`.execute(db);
  await sql`alter table controls_migration.platform_wait_sightings drop column platform_key`.execute(
    db,
  );
  await sql`alter table controls_migration.runs
    drop column source_relation, drop column source_oid, drop column source_database,
    drop column platform_key`.execute(db);
}
