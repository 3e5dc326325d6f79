import { type Kysely, sql } from "kysely";

/**
 * The per-run bulk tables (`source_rows`, `snapshot_identities`, `snapshot_controls`,
 * `findings`, `actions`) keep `run_id` but lose its foreign key to `runs`. The key's check ran a
 * query per inserted row and took a share lock on the run's row, so concurrent pages of one run
 * queued on it: it cost as much as the insert itself (0.79 s against 0.39 s per 100,000 snapshot
 * rows), at 1,000,000 identities about 400,000 checks a plan. Every such row is written by the run
 * that holds its id, and the tool never deletes a run; the small per-run tables (run_controls,
 * run_events, request_series) keep theirs.
 *
 * Names are written literally: a migration is a record of its day and never changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    "source_rows",
    "snapshot_identities",
    "snapshot_controls",
    "findings",
    "actions",
  ]) {
    await sql`alter table ${sql.table(`controls_migration.${table}`)}
      drop constraint if exists ${sql.id(`${table}_run_id_fkey`)}`.execute(db);
  }
}
