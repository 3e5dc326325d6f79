/**
 * The findings' delta of a writing run against the previous one's state after its actions, over
 * the identities both runs observed (issue 50 §4): an identity one of them did not read keeps its
 * last known finding and is neither new nor resolved. SQL only; `migration/run/world-delta.ts`
 * decides when it applies.
 */
import { type Kysely, sql } from "kysely";
import { type Database, TOOL_TABLES } from "../schema.ts";

const T = {
  runs: sql.table(TOOL_TABLES.runs),
  si: sql.table(TOOL_TABLES.snapshotIdentities),
  f: sql.table(TOOL_TABLES.findings),
  a: sql.table(TOOL_TABLES.actions),
};

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

/** A finding both runs could have seen: of the source alone, or of an identity both observed. */
const compared = (runId: string, sinceId: string, x: string) => {
  const i = sql.ref(`${x}.i`);
  return sql`(${i} = '' or ${sql.ref(`${x}.fk`)} in ${SOURCE_KINDS}
    or (${observed(runId, i)} and ${observed(sinceId, i)}))`;
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
      ? sql`and not exists (select 1 from ${T.a} a where a.run_id = ${run} and a.status = 'succeeded'
    and (a.finding_id = f.id or (f.finding = 'contested' and a.identity_id = f.identity_id)))`
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

/** The identities both runs observed (those either run read, for a listing: those it kept). */
const comparedIdentities = (runId: string, sinceId: string) => sql`
  select distinct s.identity_id as i from ${T.si} s
  where s.run_id in (${runId}, ${sinceId}) and s.status in ('found', 'not_found')
    and ${observed(runId, sql.ref("s.identity_id"))} and ${observed(sinceId, sql.ref("s.identity_id"))}`;

export interface FindingDelta {
  readonly newFindings: number;
  readonly resolvedFindings: number;
  readonly newClientWork: number;
  /** Findings of one kind in both runs whose owner changed: neither new nor resolved. */
  readonly changedFindings: number;
  /** Identities observed by both runs, over which the delta is computed. */
  readonly comparedIdentities: number;
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
  const now = keys(runId, false);
  const then = keys(sinceId, true);
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
  const then = keys(sinceId, true);
  const q =
    side === "added" ? onlyIn(now, then, runId, sinceId) : onlyIn(then, now, runId, sinceId);
  const r = await sql<{ i: string; fk: string; k: string }>`
    select i, fk, k from (${q}) d order by i, fk, k limit ${limit}`.execute(db);
  return r.rows.map((x) => ({ identity_id: x.i === "" ? null : x.i, finding: x.fk, owner: x.k }));
}
