import { type Kysely, sql } from "kysely";

/**
 * - `request_series`: the platform client's requests per second over a run (with its 429s,
 *   retries and ambiguous outcomes), stored with the run so that report.html's timeline can be
 *   drawn again by `controls-migrate report`. A resumed run adds its own seconds.
 * - `runs (started_at, id)`: the keyset of `controls-migrate show`, which walks a database's runs
 *   newest first and looks the identity up in each run by the `(run_id, identity_id)` indexes the
 *   run tables already have.
 *
 * Names are written literally: a migration is a record of its day and never changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table controls_migration.request_series (
      run_id text not null references controls_migration.runs (id) on delete cascade,
      at timestamptz not null,
      requests integer not null check (requests >= 0),
      rate_limited integer not null check (rate_limited >= 0),
      retries integer not null check (retries >= 0),
      ambiguous integer not null check (ambiguous >= 0),
      primary key (run_id, at)
    )`.execute(db);
  await sql`create index runs_started_at_id_idx
    on controls_migration.runs (started_at, id)`.execute(db);
}
