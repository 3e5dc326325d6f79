import { type Kysely, sql } from "kysely";

/**
 * The platform's own legacy fields, the third side of the reconciliation (issue 27):
 *
 * - `snapshot_identities.platform_user_disabled` / `platform_admin_disabled`: what the platform's
 *   Identity said of `user_disabled` / `admin_disabled` when it was read (null: not read, or the
 *   platform did not say);
 * - `findings.platform_user_disabled` / `platform_admin_disabled`: the same, recorded with each
 *   finding beside the source's flags, so reports count the three-way cells with one query;
 * - `platform_wait_sightings`: the first time a run saw an identity awaiting the platform's own
 *   migration (`awaiting_platform_migration`), per flag, across runs; `--wait-for-platform-s`
 *   creates the control once that sighting is old enough. A bare keyed table, no foreign key:
 *   a sighting outlives the run that made it.
 *
 * Nullable columns without defaults: adding them rewrites nothing. Names are written literally:
 * a migration is a record of its day and never changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ["snapshot_identities", "findings"]) {
    await sql`alter table ${sql.table(`controls_migration.${table}`)}
      add column platform_user_disabled boolean null,
      add column platform_admin_disabled boolean null`.execute(db);
  }
  await sql`
    create table controls_migration.platform_wait_sightings (
      identity_id text not null,
      flag text not null check (flag in ('user_disabled', 'admin_disabled')),
      first_seen_at timestamptz not null default now(),
      run_id text not null,
      primary key (identity_id, flag)
    )`.execute(db);
}
