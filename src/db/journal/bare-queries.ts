/**
 * The identities a listing showed bare (no active control, both legacy fields false: `listed_bare`,
 * 0019), which its snapshot does not keep, stored in chunks; and which of them nothing observed or
 * wrote to since. SQL only; `migration/read/bare-listed.ts` packs the chunks and decides.
 */
import { type Kysely, sql } from "kysely";
import type { Database } from "../schema.ts";
import { T } from "../table-refs.ts";
import { withKeyLookups } from "./key-lookups.ts";

/** One chunk: lower-case UUIDs packed 16 bytes each, and any other id. */
export interface BareChunk {
  readonly uuids: Uint8Array;
  readonly others: readonly string[];
}

/**
 * Stores chunk `chunk` of the identities run `runId` listed bare; a chunk sent again is kept once.
 *
 * @example
 *   await insertBareChunk(db, runId, 0, { uuids: packed, others: [] });
 */
export async function insertBareChunk(
  db: Kysely<Database>,
  runId: string,
  chunk: number,
  c: BareChunk,
): Promise<void> {
  // Sent as hex text: PGlite takes a bytea parameter about seven times slower.
  const hex = Buffer.from(c.uuids.buffer, c.uuids.byteOffset, c.uuids.byteLength).toString("hex");
  await sql`insert into ${T.bare} (run_id, chunk, uuids, others)
    values (${runId}, ${chunk}, decode(${hex}, 'hex'), ${[...c.others]}::text[])
    on conflict (run_id, chunk) do nothing`.execute(db);
}

/**
 * The chunks run `runId` recorded, one query each (a chunk is about 320 kB).
 *
 * @example
 *   for await (const c of bareChunks(db, completeId)) scan(c.uuids);
 */
export async function* bareChunks(db: Kysely<Database>, runId: string): AsyncGenerator<BareChunk> {
  let after = -1;
  for (;;) {
    const r = await sql<{ chunk: number; uuids: string; others: string[] }>`
      select chunk, encode(uuids, 'hex') as uuids, others from ${T.bare}
      where run_id = ${runId} and chunk > ${after} order by chunk limit 1`.execute(db);
    const row = r.rows[0];
    if (!row) return;
    after = Number(row.chunk);
    yield { uuids: Buffer.from(row.uuids, "hex"), others: row.others };
  }
}

/**
 * Of `ids`, those that no run since `completeId` (itself included, `runId` not) holds a snapshot
 * row of, and that no run started since it wrote to (or meant to) on `runId`'s platform.
 *
 * @example
 *   const still = await unobservedSince(db, runId, completeId, bareIds);
 */
export async function unobservedSince(
  db: Kysely<Database>,
  runId: string,
  completeId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const r = await sql<{ id: string }>`
    with since as (select r.id from ${T.runs} r
        where (r.id = ${completeId} or r.since_run_id = ${completeId}) and r.id <> ${runId})
    select a.id from unnest(${[...ids]}::text[]) as a(id)
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
  await withKeyLookups(db, (trx) =>
    sql`update ${T.si} set observed_via = 'carried', observed_run_id = ${completeId}
      where run_id = ${runId} and identity_id = any(${[...ids]}::text[])`.execute(trx),
  );
}
