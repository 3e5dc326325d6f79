import { type Kysely, sql } from "kysely";

/**
 * The source's ids as the last writing run of each platform and source read them (issue 33). A
 * run stores only the source rows with a flag set, so a flagged row that the previous writing run
 * did not store was either clean or absent then; this set tells which (`flag_set` against
 * `source_row_added`).
 * - `source_id_sets`: one per platform and source (`runs.options`' `api_url` and `source`), with
 *   the run whose read it holds.
 * - `source_ids`: the set's ids as 64-bit hashes of their lower-case text (8 bytes an id, not the
 *   id's text), one row per id; no foreign key (a million rows are inserted at a time).
 *
 * Names are written literally: a migration is a record of its day and never changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table controls_migration.source_id_sets (
      id serial primary key,
      api_url text not null,
      source jsonb not null,
      run_id text not null,
      refreshed_at timestamptz not null default now(),
      unique (api_url, source)
    )`.execute(db);
  await sql`
    create table controls_migration.source_ids (
      set_id integer not null,
      h bigint not null,
      primary key (set_id, h)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table controls_migration.source_ids`.execute(db);
  await sql`drop table controls_migration.source_id_sets`.execute(db);
}
