/**
 * What a run is bound to, resolved when it starts (migration 0014): its source relation as the
 * database resolved it and the platform's key.
 */
import type { Kysely } from "kysely";
import { type Database, TOOL_TABLES } from "../schema.ts";
import type { SourceIdentity } from "../source/source-identity.ts";

/** What a run recorded of its world; nulls for a run of an older version. */
export interface RecordedWorld {
  readonly source: SourceIdentity | null;
  readonly platformKey: string | null;
}

/** Records the run's source identity and platform key (idempotent: the same values again). */
export async function saveRunWorld(
  db: Kysely<Database>,
  runId: string,
  world: { readonly source: SourceIdentity; readonly platformKey: string },
): Promise<void> {
  await db
    .updateTable(TOOL_TABLES.runs)
    .set({
      source_relation: world.source.relation,
      source_oid: world.source.oid,
      source_database: world.source.database,
      platform_key: world.platformKey,
    })
    .where("id", "=", runId)
    .execute();
}

/** The world a run recorded (undefined: no such run). */
export async function runWorld(
  db: Kysely<Database>,
  runId: string,
): Promise<RecordedWorld | undefined> {
  const row = await db
    .selectFrom(TOOL_TABLES.runs)
    .select(["source_relation", "source_oid", "source_database", "platform_key"])
    .where("id", "=", runId)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    source:
      row.source_database === null
        ? null
        : {
            relation: row.source_relation,
            oid: row.source_oid === null ? null : String(row.source_oid),
            database: row.source_database,
          },
    platformKey: row.platform_key,
  };
}
