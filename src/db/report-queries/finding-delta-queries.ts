/**
 * The findings' delta of a writing run against the previous one's state after its actions, over
 * the identities both runs observed (issue 50 §4): an identity one of them did not read keeps its
 * last known finding and is neither new nor resolved. SQL only; `migration/run/world-delta.ts`
 * decides when it applies.
 */
import { type Kysely, sql } from "kysely";
import type { Database } from "../schema.ts";
import { T } from "../table-refs.ts";

type Sql = ReturnType<typeof sql>;

/** Findings of the source alone: every run reads the whole source, so both observed them. */
const SOURCE_KINDS = sql`('invalid_source_row', 'source_warning')`;

/**
 * Whether `run` observed identity `i`: a complete (bulk) listing observes every identity; any
 * other strategy, those it read (found, or answered 404).
 */
const observed = (run: string, i: Sql) => sql`(exists (select 1 from ${T.runs} r
    where r.id = ${run} and r.strategy = 'bulk')
  or exists (select 1 from ${T.si} o where o.run_id = ${run} and o.identity_id = ${i}
    and o.status in ('found', 'not_found')))`;

/**
 * Whether `run` knows identity `i`'s state: it observed it, or carries it as last seen by an
 * earlier run (`carried_findings`; identity '': every identity, a complete listing carried on).
 */
const known = (run: string, i: Sql) => sql`(${observed(run, i)}
  or exists (select 1 from ${T.cf} k where k.run_id = ${run} and k.identity_id in (${i}, '')))`;

/**
 * A finding both runs could have seen: of the source alone, or of an identity this run observed
 * and the earlier one knew (observed, or carried as last seen by a run before it).
 */
const compared = (runId: string, sinceId: string, x: string) => {
  const i = sql.ref(`${x}.i`);
  return sql`(${i} = '' or ${sql.ref(`${x}.fk`)} in ${SOURCE_KINDS}
    or (${observed(runId, i)} and ${known(sinceId, i)}))`;
};

/**
 * A run's findings as compared (after its own succeeded actions, for the earlier run: a contested
 * identity it wrote anyway counts as settled, so the next run never calls it resolved).
 * The key a finding is compared by: identity and kind; `k` its owner (either spelling); `c`, the
 * fact a finding refines (an expected control of the owner missing, whatever the platform's legacy
 * field says of it); `u`, the legacy fields were not read (an identity a filtered listing did not
 * show).
 */
const keys = (run: string, afterActions: boolean) => sql`
  select coalesce(identity_id, '') as i, finding as fk,
    regexp_replace(coalesce(expected_set_by, observed_set_by, ''), '^SET_BY_(CLIENT|SERVICE)$', '\\1') as k,
    case when finding in (${MISSING}) then 'missing' else finding end as c,
    platform_user_disabled is null and platform_admin_disabled is null as u
  from ${T.f} f where run_id = ${run} and finding <> 'in_sync'
  ${
    afterActions
      ? // Two tests, not one with an "or": PostgreSQL hashes each; the "or" made a loop over the
        // run's actions for each finding (100,000 of each: minutes).
        sql`and not exists (select 1 from ${T.a} a where a.run_id = ${run} and a.status = 'succeeded'
      and a.finding_id = f.id)
    and not (f.finding = 'contested' and exists (select 1 from ${T.a} a where a.run_id = ${run}
      and a.status = 'succeeded' and a.identity_id = f.identity_id))`
      : sql``
  }`;

/** Findings of a missing expected control: which one depends on the platform's legacy field. */
const MISSING = sql.join(
  [
    "missing_client_control",
    "missing_service_control",
    "awaiting_platform_migration",
    "platform_unaware_of_admin_flag",
  ].map((k) => sql`${k}`),
);

/**
 * The findings of `a` that `b` does not hold, over the identities both runs observed. A finding
 * of the same kind is the same finding whatever its detail or owner; one per fact, whatever the
 * strategy: where either side did not read the platform's legacy fields, a missing control of one
 * owner is the same finding under any of its names.
 */
const onlyIn = (a: Sql, b: Sql, runId: string, sinceId: string) => sql`
  select distinct x.i, x.fk, x.k from (${a}) x where ${compared(runId, sinceId, "x")}
    and not exists (select 1 from (${b}) y where y.i = x.i
      and (y.fk = x.fk or (y.c = x.c and y.k = x.k and (x.u or y.u))))`;

/** Findings of one kind in both runs whose owner differs: a detail changed (counted apart). */
const changedIn = (a: Sql, b: Sql, runId: string, sinceId: string) => sql`
  select distinct x.i, x.fk from (${a}) x where ${compared(runId, sinceId, "x")}
    and exists (select 1 from (${b}) y where y.i = x.i and y.fk = x.fk)
    and not exists (select 1 from (${b}) y where y.i = x.i and y.fk = x.fk and y.k = x.k)`;

/**
 * The identities this run observed and the earlier one knew (those either run read, for a
 * listing: those it kept; and those the earlier one carried).
 */
const comparedIdentities = (runId: string, sinceId: string) => sql`
  select distinct s.i from (
    select identity_id as i from ${T.si} where run_id in (${runId}, ${sinceId})
      and status in ('found', 'not_found')
    union all
    select identity_id from ${T.cf} where run_id = ${sinceId} and identity_id <> '') s
  where ${observed(runId, sql.ref("s.i"))} and ${known(sinceId, sql.ref("s.i"))}`;

/**
 * The earlier run's findings as the delta weighs them: those left after its own actions, and
 * those it carried as last seen by a run before it.
 */
const thenKeys = (sinceId: string) => sql`
  select * from (${keys(sinceId, true)}) o
  union all
  select identity_id as i, finding as fk, owner as k,
    case when finding in (${MISSING}) then 'missing' else finding end as c, legacy_unread as u
  from ${T.cf} where run_id = ${sinceId} and finding is not null`;

export interface FindingDelta {
  readonly newFindings: number;
  readonly resolvedFindings: number;
  readonly newClientWork: number;
  /** Findings of one kind in both runs whose owner changed: neither new nor resolved. */
  readonly changedFindings: number;
  /** Identities observed by both runs, over which the delta is computed. */
  readonly comparedIdentities: number;
  /** Findings of identities this run did not observe, kept as last seen by an earlier run. */
  readonly lastSeen: LastSeen;
}

/** summary.json `changes.last_seen`: the findings carried, and by the run that last saw them. */
export interface LastSeen {
  readonly findings: number;
  readonly by_run: Record<string, number>;
}

/**
 * Carries into `runId` what it did not observe of what `sinceId` knew (issue 50 §4): each
 * identity `sinceId` observed or carried, and `runId` did not observe, keeps its findings (after
 * `sinceId`'s own actions) or its clean state, with the run that last observed it; a complete
 * listing's ground (every other identity clean) is carried on as identity ''. A run that lists
 * every identity carries nothing. Idempotent: a run's rows are written afresh.
 */
async function carryUnobserved(db: Kysely<Database>, runId: string, sinceId: string) {
  const notHere = (i: Sql) => sql`not ${observed(runId, i)}`;
  await db.transaction().execute(async (trx) => {
    await sql`delete from ${T.cf} where run_id = ${runId}`.execute(trx);
    await sql`
      insert into ${T.cf} (run_id, identity_id, finding, owner, legacy_unread, seen_by_run_id)
      select ${runId}, x.i, x.fk, x.k, x.u, ${sinceId} from (${keys(sinceId, true)}) x
      where x.i <> '' and x.fk not in ${SOURCE_KINDS} and x.fk <> 'read_failed'
        and ${observed(sinceId, sql.ref("x.i"))} and ${notHere(sql.ref("x.i"))}
      union all
      select ${runId}, s.identity_id, null, '', false, ${sinceId} from ${T.si} s
      where s.run_id = ${sinceId} and s.status in ('found', 'not_found')
        and ${notHere(sql.ref("s.identity_id"))}
      union all
      select ${runId}, c.identity_id, c.finding, c.owner, c.legacy_unread, c.seen_by_run_id
      from ${T.cf} c where c.run_id = ${sinceId} and c.identity_id <> ''
        and not ${observed(sinceId, sql.ref("c.identity_id"))} and ${notHere(sql.ref("c.identity_id"))}
      union all
      select ${runId}, '', null, '', false, coalesce(
        (select r.id from ${T.runs} r where r.id = ${sinceId} and r.strategy = 'bulk'),
        (select c.seen_by_run_id from ${T.cf} c where c.run_id = ${sinceId} and c.identity_id = ''
          limit 1))
      where not exists (select 1 from ${T.runs} r where r.id = ${runId} and r.strategy = 'bulk')
        and (exists (select 1 from ${T.runs} r where r.id = ${sinceId} and r.strategy = 'bulk')
          or exists (select 1 from ${T.cf} c where c.run_id = ${sinceId} and c.identity_id = ''))
    `.execute(trx);
  });
}

/**
 * The findings a run carries as last seen by an earlier run, in all and by that run.
 *
 * @example
 *   await lastSeenOf(db, runId) // { findings: 237, by_run: { "20260101-010000-ab12": 237 } }
 */
export async function lastSeenOf(db: Kysely<Database>, runId: string): Promise<LastSeen> {
  const r = await sql<{ run: string; n: number }>`
    select seen_by_run_id as run, count(*)::int as n from ${T.cf}
    where run_id = ${runId} and finding is not null
    group by seen_by_run_id order by seen_by_run_id`.execute(db);
  const by = Object.fromEntries(r.rows.map((x) => [x.run, Number(x.n)]));
  return { findings: r.rows.reduce((n, x) => n + Number(x.n), 0), by_run: by };
}

/**
 * New and resolved findings of `runId` (as read) against `sinceId`'s findings left after its own
 * succeeded actions, so the tool's fixes never count as resolved; and the new ones of `clientKinds`
 * that this run's actions did not settle (new work left for the client). Only identities both
 * runs observed are compared.
 *
 * @example
 *   const d = await findingDelta(db, runId, since.id, CLIENT_WORK_KINDS);
 */
export async function findingDelta(
  db: Kysely<Database>,
  runId: string,
  sinceId: string,
  clientKinds: readonly string[],
): Promise<FindingDelta> {
  const count = async (q: Sql) =>
    Number(
      (await sql<{ n: number }>`select count(*)::int as n from (${q}) d`.execute(db)).rows[0]?.n ??
        0,
    );
  const kinds = sql.join(clientKinds.map((k) => sql`${k}`));
  await carryUnobserved(db, runId, sinceId);
  const now = keys(runId, false);
  const then = thenKeys(sinceId);
  return {
    newFindings: await count(onlyIn(now, then, runId, sinceId)),
    resolvedFindings: await count(onlyIn(then, now, runId, sinceId)),
    newClientWork: await count(
      onlyIn(
        sql`select * from (${keys(runId, true)}) n where fk in (${kinds})`,
        then,
        runId,
        sinceId,
      ),
    ),
    changedFindings: await count(changedIn(now, then, runId, sinceId)),
    comparedIdentities: await count(comparedIdentities(runId, sinceId)),
    lastSeen: await lastSeenOf(db, runId),
  };
}

/**
 * The first `limit` findings of one side of {@link findingDelta}: `added` (this run's, as read,
 * that the earlier run did not leave) or resolved (the reverse).
 */
export async function findingDeltaRows(
  db: Kysely<Database>,
  runId: string,
  sinceId: string,
  side: "added" | "resolved",
  limit: number,
): Promise<{ identity_id: string | null; finding: string; owner: string }[]> {
  const now = keys(runId, false);
  const then = thenKeys(sinceId);
  const q =
    side === "added" ? onlyIn(now, then, runId, sinceId) : onlyIn(then, now, runId, sinceId);
  const r = await sql<{ i: string; fk: string; k: string }>`
    select i, fk, k from (${q}) d order by i, fk, k limit ${limit}`.execute(db);
  return r.rows.map((x) => ({ identity_id: x.i === "" ? null : x.i, finding: x.fk, owner: x.k }));
}

/**
 * A page of the findings `runId` carries as last seen by an earlier run, after `after` (keyset
 * on identity and finding): diff.csv's rows for them.
 *
 * @example
 *   const page = await lastSeenPage(db, runId, null, 5000);
 */
export async function lastSeenPage(
  db: Kysely<Database>,
  runId: string,
  after: { readonly identity_id: string; readonly finding: string } | null,
  limit: number,
): Promise<{ identity_id: string; finding: string; owner: string; seen_by_run_id: string }[]> {
  const from = after
    ? sql`and (identity_id, finding) > (${after.identity_id}, ${after.finding})`
    : sql``;
  const r = await sql<{
    identity_id: string;
    finding: string;
    owner: string;
    seen_by_run_id: string;
  }>`
    select distinct identity_id, finding, owner, seen_by_run_id from ${T.cf}
    where run_id = ${runId} and finding is not null ${from}
    order by identity_id, finding limit ${limit}`.execute(db);
  return r.rows;
}
