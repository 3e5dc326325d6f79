import { type Kysely, sql } from "kysely";

/**
 * - `world_changes`: what changed in the world between a writing run (apply, reconcile) and the
 *   previous writing run on the same platform and source, apart from the tool's own writes: one
 *   row per outside change (`control_added`, `flag_cleared`, ...), with the control and owner it
 *   concerns, when it was seen, and whether it undid a write of the tool. Small (changes, not
 *   identities); cascades from `runs` like the other per-run tables of its size.
 *
 * Names are written literally: a migration is a record of its day and never changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table controls_migration.world_changes (
      run_id text not null references controls_migration.runs (id) on delete cascade,
      since_run_id text not null,
      identity_id text not null,
      kind text not null,
      control_id text,
      set_by text,
      detail text,
      undone boolean not null default false,
      seen_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index world_changes_run_identity_idx
    on controls_migration.world_changes (run_id, identity_id)`.execute(db);
  await sql`create index world_changes_identity_idx
    on controls_migration.world_changes (identity_id)`.execute(db);
}
