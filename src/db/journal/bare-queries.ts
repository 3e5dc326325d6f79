/**
 * The identities a listing showed bare (no active control, both legacy fields false: `listed_bare`,
 * 0019), which its snapshot does not keep, and what `--since-last` (issue 55) learns from them: a
 * candidate whose source row changed that the last complete read saw bare, and no run observed
 * otherwise or wrote to since, is still bare on a platform that moves `updated_at` honestly.
 * SQL only.
 */
import { type Kysely, sql } from "kysely";
import type { Database } from "../schema.ts";
import { T } from "../table-refs.ts";

/** A lower-case UUID, as `uuid` text reads back. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Stores one chunk of identities run `runId` listed bare.
 *
 * @example
 *   await insertBare(db, runId, ["6a591c0c-3e0f-4494-8559-5dc864060d39"]);
 */
export async function insertBare(
  db: Kysely<Database>,
  runId: string,
  ids: readonly string[],
): Promise<void> {
  if (ids.length === 0) return;
  const [uuids, others] = split(ids);
  await sql`insert into ${T.bare} (run_id, uuids, others)
    values (${runId}, ${uuids}::uuid[], ${others}::text[])`.execute(db);
}

/**
 * Of `ids`, those run `completeId` listed bare, that no run since it (itself included: kept rows
 * are not bare) holds a snapshot row of, and that no run started since it wrote to (or meant to)
 * on run `runId`'s platform: their state is still the bare one `completeId` saw, as far as the
 * platform's `updated_at` tells (the caller leaves out those listed as changed).
 *
 * @example
 *   const bare = await stillBare(db, runId, completeId, changedCandidates);
 */
export async function stillBare(
  db: Kysely<Database>,
  runId: string,
  completeId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const [uuids, others] = split(ids);
  // Joined with the few ids asked for: the chunks are read once, a hash of the asked ids probed.
  const r = await sql<{ id: string }>`
    with since as (select r.id from ${T.runs} r
        where (r.id = ${completeId} or r.since_run_id = ${completeId}) and r.id <> ${runId}),
      listed as (
        select u::text as id from ${T.bare} b cross join lateral unnest(b.uuids) u
          join unnest(${uuids}::uuid[]) q(id) on q.id = u
        where b.run_id = ${completeId}
        union
        select o from ${T.bare} b cross join lateral unnest(b.others) o
          join unnest(${others}::text[]) q(id) on q.id = o
        where b.run_id = ${completeId})
    select a.id from listed a
    where not exists (select 1 from ${T.si} si
        where si.run_id in (select id from since) and si.identity_id = a.id)
      and not exists (select 1 from ${T.a} x where x.identity_id = a.id and x.run_id in (
        select r.id from ${T.runs} r left join ${T.runs} o on o.id = r.parent_run_id
        where r.id <> ${runId}
          and r.started_at >= (select started_at from ${T.runs} where id = ${completeId})
          and coalesce(r.platform_key, o.platform_key) =
            (select platform_key from ${T.runs} where id = ${runId})))`.execute(db);
  return new Set(r.rows.map((x) => x.id));
}

/** Lower-case UUIDs apart from any other id. */
function split(ids: readonly string[]): [string[], string[]] {
  const uuids: string[] = [];
  const others: string[] = [];
  for (const id of ids) (UUID.test(id) ? uuids : others).push(id);
  return [uuids, others];
}

/**
 * Marks the identities run `runId` carried as run `completeId` listed them bare: `observed_via`
 * `carried`, observed by `completeId`.
 */
export async function markCarriedBare(
  db: Kysely<Database>,
  runId: string,
  completeId: string,
  ids: readonly string[],
): Promise<void> {
  if (ids.length === 0) return;
  await sql`update ${T.si} set observed_via = 'carried', observed_run_id = ${completeId}
    where run_id = ${runId} and identity_id = any(${[...ids]}::text[])`.execute(db);
}
