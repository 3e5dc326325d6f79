import { type Kysely, sql } from "kysely";

/**
 * A source id set belongs to one platform (issue 51): `source_id_sets` was keyed by the API URL
 * and the source, so two platforms with the same API URL and another token URL or client id shared
 * one set. It is now keyed by `platform_key` (the platform's key as `runs.platform_key` records it,
 * 0014) and the source. A set takes the key of the run whose read it holds; a set held by a run
 * that recorded no key (an older version's) belongs to no known platform and is dropped with its
 * ids: the next writing run of its platform records a new one.
 *
 * Names are written literally: a migration is a record of its day and never changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table controls_migration.source_id_sets add column platform_key text null`.execute(
    db,
  );
  await sql`update controls_migration.source_id_sets s set platform_key = r.platform_key
    from controls_migration.runs r where r.id = s.run_id`.execute(db);
  await sql`delete from controls_migration.source_ids where set_id in (
    select id from controls_migration.source_id_sets where platform_key is null)`.execute(db);
  await sql`delete from controls_migration.source_id_sets where platform_key is null`.execute(db);
  await sql`alter table controls_migration.source_id_sets
    drop constraint source_id_sets_api_url_source_key,
    drop column api_url,
    alter column platform_key set not null,
    add constraint source_id_sets_platform_key_source_key unique (platform_key, source)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table controls_migration.source_id_sets add column api_url text null`.execute(db);
  await sql`update controls_migration.source_id_sets s set api_url = split_part(s.platform_key, '|', 1)`.execute(
    db,
  );
  // Two platforms of one API URL held a set each; the older API-URL key holds one: keep the newest.
  await sql`delete from controls_migration.source_ids where set_id in (
    select id from controls_migration.source_id_sets s where exists (
      select 1 from controls_migration.source_id_sets o
      where o.api_url = s.api_url and o.source = s.source
        and (o.refreshed_at, o.id) > (s.refreshed_at, s.id)))`.execute(db);
  await sql`delete from controls_migration.source_id_sets s where exists (
      select 1 from controls_migration.source_id_sets o
      where o.api_url = s.api_url and o.source = s.source
        and (o.refreshed_at, o.id) > (s.refreshed_at, s.id))`.execute(db);
  await sql`alter table controls_migration.source_id_sets
    drop constraint source_id_sets_platform_key_source_key,
    drop column platform_key,
    alter column api_url set not null,
    add constraint source_id_sets_api_url_source_key unique (api_url, source)`.execute(db);
}
