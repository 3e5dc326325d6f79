/**
 * Listed identities claimed in the database (`listed_claims`, 0012): those a run's in-memory source
 * index does not hold, once its source is past the index's bound. A page's claim is one statement
 * that also says what `source_rows` holds of each id (`claimListed`); once the listing is complete,
 * the source pass's candidates no page claimed are read in keyset pages
 * (`candidatesWindow`); and a run's claims are deleted once its findings are stored
 * (`forgetClaims`).
 */
import { type Kysely, sql } from "kysely";
import { type Database, TOOL_TABLES } from "../schema.ts";
import { withKeyLookups } from "./key-lookups.ts";
import { arrayParam } from "./unnest-insert.ts";

/** What a claim says of one id: whether this batch claimed it, and the id's source rows. */
export interface ClaimAnswer {
  readonly identity_id: string;
  /** Claimed by this batch: no earlier batch had claimed it. */
  readonly claimed: boolean;
  /** Source rows of the id in this run (0: none). */
  readonly rows: number;
  readonly valid: boolean | null;
  readonly user_disabled: boolean | null;
  readonly admin_disabled: boolean | null;
}

/**
 * Claims, as batch `batch` of the run, the ids that the source rows hold or that `stored` marks
 * (an identity stored whatever the source says: it holds a control), and answers for each of
 * them: claimed now or before, and what its source rows say. Ids neither held nor stored are left
 * unclaimed and unanswered. One statement; sent again after a lost answer, it answers the same
 * (what `batch` claimed before counts as claimed).
 *
 * @example
 *   const answers = await claimListed(db, runId, 7, ["6a59…"], [false]);
 */
export async function claimListed(
  db: Kysely<Database>,
  runId: string,
  batch: number,
  ids: readonly string[],
  stored: readonly boolean[],
): Promise<ClaimAnswer[]> {
  if (ids.length === 0) return [];
  const claims = sql.table(TOOL_TABLES.listedClaims);
  // Each id by its key, in the source rows and the claims: a page costs its ids, not the run.
  const statement = sql<ClaimAnswer>`
    with u as (select * from unnest(${arrayParam(ids, "text")}, ${arrayParam(stored, "bool")}) as u(identity_id, stored)),
    s as (
      -- Each id's rows by its key, an aggregate a row: a join or "= any" here let the planner,
      -- with statistics from before the run's writes, read every source row of the run.
      select u.identity_id, x.rows, x.valid, x.user_disabled, x.admin_disabled
      from u cross join lateral (
        select count(*)::int as rows, bool_and(sr.valid) as valid,
          bool_and(sr.user_disabled) as user_disabled, bool_and(sr.admin_disabled) as admin_disabled
        from ${sql.table(TOOL_TABLES.sourceRows)} sr
        where sr.run_id = ${runId} and sr.identity_id = u.identity_id) x
      where x.rows > 0),
    wanted as (
      select u.identity_id from u left join s on s.identity_id = u.identity_id
      where u.stored or s.identity_id is not null),
    c as (
      insert into ${claims} (run_id, identity_id, batch)
      select ${runId}, w.identity_id, ${batch} from wanted w
      on conflict (run_id, identity_id) do nothing
      returning identity_id)
    select w.identity_id,
      (c.identity_id is not null
        -- Read as the statement began (not its own inserts): what this batch claimed before. A
        -- count by key for each id: as a join, or an exists (which PostgreSQL may hash), the
        -- planner read every claim of the run.
        or (select count(*) from ${claims} m
            where m.run_id = ${runId} and m.identity_id = w.identity_id and m.batch = ${batch}) > 0)
        as claimed,
      coalesce(s.rows, 0) as rows, s.valid, s.user_disabled, s.admin_disabled
    from wanted w
    left join s on s.identity_id = w.identity_id
    left join c on c.identity_id = w.identity_id`;
  const r = await withKeyLookups(db, (trx) => statement.execute(trx));
  return r.rows;
}

/** A candidate of the source pass: a valid row with a flag true. */
export interface UnclaimedCandidate {
  readonly identity_id: string;
  readonly user_disabled: boolean;
  readonly admin_disabled: boolean;
}

/** One window of the source pass's candidates: those no batch claimed, and where the next starts. */
export interface CandidatesWindow {
  readonly unclaimed: readonly UnclaimedCandidate[];
  /** The window's last candidate id, claimed or not (the next window's `afterId`); null: none. */
  readonly last: string | null;
  /** It held `limit` candidates: another may follow. */
  readonly full: boolean;
}

/**
 * The next `limit` of the source pass's valid candidates after `afterId` (`seq > 0`: rows looked
 * up by id belong to identities observed then), in id order, and which of them no batch claimed.
 * The caller skips those its source index holds: the index knows which of them were listed.
 *
 * Linear by construction: a window reads `limit` candidates from the index on (run, id), and each
 * one's claim by its key (a subquery a row, not a join). As an anti-join under a limit, PGlite
 * (no statistics) merged against every claim of the run from the first, a page at a time: a plan
 * of 10,000,000 identities spent over 20 minutes there. A window with every candidate claimed
 * returns none, and `last` to go on from.
 *
 * @example
 *   let after = null;
 *   for (let w; (w = await candidatesWindow(db, runId, after, 5000)).last; after = w.last) use(w.unclaimed);
 */
export async function candidatesWindow(
  db: Kysely<Database>,
  runId: string,
  afterId: string | null,
  limit: number,
): Promise<CandidatesWindow> {
  const after = afterId === null ? sql`` : sql`and s.identity_id > ${afterId}`;
  const r = await sql<UnclaimedCandidate & { claimed: boolean }>`
    with w as (
      select s.identity_id, s.user_disabled, s.admin_disabled
      from ${sql.table(TOOL_TABLES.sourceRows)} s
      where s.run_id = ${runId} and s.seq > 0 and s.valid and s.identity_id is not null
        and (s.user_disabled or s.admin_disabled) ${after}
      order by s.identity_id limit ${limit})
    select w.identity_id, w.user_disabled, w.admin_disabled,
      exists (select 1 from ${sql.table(TOOL_TABLES.listedClaims)} c
              where c.run_id = ${runId} and c.identity_id = w.identity_id) as claimed
    from w order by w.identity_id`.execute(db);
  const unclaimed = r.rows
    .filter((row) => !row.claimed)
    .map(({ identity_id, user_disabled, admin_disabled }) => ({
      identity_id,
      user_disabled,
      admin_disabled,
    }));
  return { unclaimed, last: r.rows.at(-1)?.identity_id ?? null, full: r.rows.length === limit };
}

/**
 * Deletes the run's claims, and any a run no longer running left (a crashed process's).
 *
 * @example
 *   await forgetClaims(db, runId);
 */
export async function forgetClaims(db: Kysely<Database>, runId: string): Promise<void> {
  await sql`
    delete from ${sql.table(TOOL_TABLES.listedClaims)} c
    where c.run_id = ${runId}
       or not exists (select 1 from ${sql.table(TOOL_TABLES.runs)} r
                      where r.id = c.run_id and r.status = 'running')`.execute(db);
}
