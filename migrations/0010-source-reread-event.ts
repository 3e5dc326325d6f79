import { type Kysely, sql } from "kysely";

/**
 * A run event of its own for the re-read of the source before a send (issue 26, step 3):
 * `run_events.kind` may now be `source_reread`, whose detail says how many pending creates the
 * source cancelled (a flag cleared) and how many flags newly appeared there (left for the next
 * run). summary.json lists it with the run's other events. Names are written literally: a
 * migration is a record of its day and never changes.
 */
const BEFORE = sql`'pause', 'continue', 'set_rate', 'throttle_on', 'throttle_off',
  'window_closed', 'window_open'`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table controls_migration.run_events
    drop constraint run_events_kind_check`.execute(db);
  await sql`alter table controls_migration.run_events
    add constraint run_events_kind_check check (kind in (${BEFORE}, 'source_reread'))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from controls_migration.run_events where kind = 'source_reread'`.execute(db);
  await sql`alter table controls_migration.run_events
    drop constraint run_events_kind_check`.execute(db);
  await sql`alter table controls_migration.run_events
    add constraint run_events_kind_check check (kind in (${BEFORE}))`.execute(db);
}
