/**
 * What the re-read of the source before a send needs beyond the reader's lookups: how many flags
 * the source holds now that the run did not see set (left for the next run, and reported).
 */
import { type Kysely, sql } from "kysely";
import type { SourceConfig } from "../../config.ts";
import { TOOL_TABLES } from "../schema.ts";
import { isTrue } from "./source-reader.ts";
import { resolveSource } from "./source-relation.ts";

// biome-ignore lint/suspicious/noExplicitAny: the source relation is the user's, not in our types
type AnyDb = Kysely<any>;

/** Flags set in the source now that the run saw clear (or never saw: a clean row has no finding). */
export interface NewlyFlagged {
  readonly userDisabled: number;
  readonly adminDisabled: number;
}

/**
 * Counts the source rows whose `user_disabled` (or `admin_disabled`) is true now while the run's
 * finding for that identity recorded it false, or the run has no finding for it (it was clean). A
 * row the run found invalid (its flags unknown) is not counted. One scan of the flagged rows.
 *
 * @example
 *   const { userDisabled } = await countNewlyFlagged(db, source, runId); // 3: left for the next run
 */
export async function countNewlyFlagged(
  db: AnyDb,
  source: SourceConfig,
  runId: string,
): Promise<NewlyFlagged> {
  const src = await resolveSource(db, source);
  const ud = isTrue(src.userDisabled);
  const ad = isTrue(src.adminDisabled);
  const row = await sql<{ ud: string | number; ad: string | number }>`
    with now_flagged as (
      select ${src.id.ref}::text as id, ${ud} as ud, ${ad} as ad
      from ${src.table} where ${src.id.ref} is not null and (${ud} or ${ad})
    ), seen as (
      select identity_id, bool_or(user_disabled) as ud, bool_or(admin_disabled) as ad,
             bool_and(user_disabled is not null and admin_disabled is not null) as known
      from ${sql.table(TOOL_TABLES.findings)}
      where run_id = ${runId} and identity_id in (select id from now_flagged)
      group by identity_id
    )
    select count(*) filter (where n.ud and (s.identity_id is null or (s.known and not s.ud))) as ud,
           count(*) filter (where n.ad and (s.identity_id is null or (s.known and not s.ad))) as ad
    from now_flagged n left join seen s on s.identity_id = n.id`
    .execute(db)
    .then((r) => r.rows[0]);
  return { userDisabled: Number(row?.ud ?? 0), adminDisabled: Number(row?.ad ?? 0) };
}
