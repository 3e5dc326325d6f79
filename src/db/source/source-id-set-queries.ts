/**
 * The source's ids as the last writing run of a platform and source read them (0011): what tells
 * a row added since then (`source_row_added`) from a clean row whose flag was set (`flag_set`),
 * since a run stores only the rows with a flag set. One set per platform (its key, 0016) and source, refreshed in
 * one statement by each writing run once its read is complete; ids as 64-bit hashes
 * (`hashtextextended`) of their lower-case text, so a million ids take 8 MB, not their text.
 */
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { SourceConfig } from "../../config.ts";
import { type Database, TOOL_SCHEMA } from "../schema.ts";
import { resolveSource } from "./source-relation.ts";

/** The platform (its key) and source a set belongs to (`world-delta-queries.ts`' `Lineage`). */
interface SetLineage {
  readonly platformKey: string;
  readonly source: Readonly<Record<string, unknown>>;
}

const SETS = sql.table(`${TOOL_SCHEMA}.source_id_sets`);
const IDS = sql.table(`${TOOL_SCHEMA}.source_ids`);

/** An id's key in a set: the hash of its lower-case text. */
export const idHash = (id: RawBuilder<unknown>): RawBuilder<unknown> =>
  sql`hashtextextended(lower(${id}::text), 0)`;

/**
 * The id set of a platform and source, if it holds the read of `runId`: else (no set yet, or it
 * holds another run's read) undefined, and the caller knows no more than the runs stored.
 *
 * @example
 *   const setId = await sourceIdSetOf(db, lineage, since.id);
 */
export async function sourceIdSetOf(
  db: Kysely<Database>,
  l: SetLineage,
  runId: string,
): Promise<number | undefined> {
  const r = await sql<{ id: number }>`select id from ${SETS}
    where platform_key = ${l.platformKey} and source = ${JSON.stringify(l.source)}::jsonb
      and run_id = ${runId}`.execute(db);
  return r.rows[0]?.id;
}

/**
 * Makes the set of a platform and source hold the source's ids as they are now, read by `runId`:
 * ids new to the set inserted, ids gone deleted, the run recorded, in one statement (all or
 * nothing, and the same again changes nothing).
 *
 * @example
 *   await refreshSourceIdSet(db, lineage, runId, options.source);
 */
export async function refreshSourceIdSet(
  db: Kysely<Database>,
  l: SetLineage,
  runId: string,
  source: SourceConfig,
): Promise<void> {
  const src = await resolveSource(db, source);
  const set = await sql<{ id: number }>`
    insert into ${SETS} (platform_key, source, run_id)
    values (${l.platformKey}, ${JSON.stringify(l.source)}::jsonb, '')
    on conflict (platform_key, source) do update set platform_key = excluded.platform_key
    returning id`.execute(db);
  const setId = set.rows[0]?.id;
  if (setId === undefined) throw new Error("source_id_sets: no set id returned");
  await sql`
    with cur as materialized (
      select distinct ${idHash(src.id.ref)} as h from ${src.table} where ${src.id.ref} is not null),
    ins as (insert into ${IDS} (set_id, h)
      select ${setId}, cur.h from cur
      where not exists (select 1 from ${IDS} x where x.set_id = ${setId} and x.h = cur.h)),
    del as (delete from ${IDS} x where x.set_id = ${setId}
      and not exists (select 1 from cur where cur.h = x.h))
    update ${SETS} set run_id = ${runId}, refreshed_at = now() where id = ${setId}`.execute(db);
}
