import { type Kysely, sql } from "kysely";

/**
 * `runs.closing_sends`: the sends of a writer process's last second, by path template (epoch ms),
 * recorded when the process lets the run go. The next writer counts them in its own one-second
 * cap, since the platform counts requests per second whichever process sends them. Null when the
 * process died first (the next writer then waits a second) or for a run of an older version.
 *
 * Names are written literally: a migration is a record of its day and never changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table controls_migration.runs add column closing_sends jsonb null`.execute(db);
}
