/**
 * Whether a complete listing showed an identity bare (no active control, both legacy fields false),
 * in SQL over `listed_bare`'s chunks (0019): the evidence that a complete run which did not keep
 * an identity read it at all. Without it, an identity the listing left out looked like one listed
 * bare (issue 50's known limit: a false `platform_field_set` on the next run).
 */
import { type RawBuilder, sql } from "kysely";
import { T } from "../table-refs.ts";

const LOWER_UUID = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$";

/**
 * True when run `run` recorded identity `id` as listed bare, or, for an incremental run, the complete
 * run it built on did (what it did not list as changed it carries): a lower-case UUID is looked for among
 * the chunk's packed 16-byte ids (at a 16-byte boundary), any other id among its `others`. For the
 * few identities a delta is about to conclude on, not for every row of a run: each test scans the
 * run's chunks (16 MB a million bare identities).
 *
 * @example
 *   sql`... and ${listedBare(sinceId, sql.ref("n.identity_id"))}`
 */
export function listedBare(run: string, id: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`exists (select 1 from ${T.bare} b, lateral (select case when ${id} ~ ${LOWER_UUID}
      then position(decode(replace(${id}, '-', ''), 'hex') in b.uuids) else 0 end as at) p
    where (b.run_id = ${run} or b.run_id = (select r.since_run_id from ${T.runs} r where r.id = ${run}))
      and ((p.at > 0 and (p.at - 1) % 16 = 0) or (p.at = 0 and ${id} = any(b.others))))`;
}
