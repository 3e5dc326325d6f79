/**
 * What `--since-last` (issue 55) reads of the journal: the last complete observation of a
 * platform and source, the last whole view built on it, what must be read again, and the
 * observations carried forward. SQL only; `migration/read/since-last.ts` decides.
 */
import { type Kysely, sql } from "kysely";
import type { Database } from "../schema.ts";
import { T } from "../table-refs.ts";
import { withKeyLookups } from "./key-lookups.ts";

/** A run `--since-last` builds on. */
export interface BasisRun {
  readonly id: string;
  readonly startedAt: Date;
  /** Its `updated_at.gte` bound: null for a complete read. */
  readonly sinceAt: Date | null;
}

/** The last complete read, the last whole view since it, and what the runs since it found. */
export interface SinceLastBasis {
  /** The last run on the platform and source that listed every identity (null: none yet). */
  readonly complete: BasisRun | null;
  /** The last run since `complete` whose snapshot is a whole view (itself, or an incremental run). */
  readonly view: BasisRun | null;
  /** Incremental runs built on `complete`. */
  readonly incrementals: number;
  /** `stale_incremental` findings of `complete`: misses its check found, and the first ids. */
  readonly staleMisses: number;
  readonly staleSample?: readonly string[];
}

/**
 * Runs of the same platform and source as `runId` whose read completed with a whole view (a bulk
 * listing, or an incremental run), started before it, newest first.
 */
const wholeViews = (runId: string) => sql`
  select r.id, r.started_at, r.since_at, r.since_run_id from ${T.runs} r, ${T.runs} me
  where me.id = ${runId} and r.id <> me.id and r.platform_key = me.platform_key
    and r.options->'source' = me.options->'source' and r.mode in ('plan', 'apply', 'reconcile')
    and r.parent_run_id is null and r.strategy = 'bulk' and r.source_rows_read is not null
    and r.status in ('completed', 'failed', 'interrupted') and r.started_at <= me.started_at
  order by r.started_at desc, r.id desc`;

type BasisRow = { id: string; started_at: Date | string; since_at: Date | string | null };
const basisOf = (r: BasisRow | undefined): BasisRun | null =>
  r
    ? {
        id: r.id,
        startedAt: new Date(r.started_at),
        sinceAt: r.since_at === null ? null : new Date(r.since_at),
      }
    : null;

/**
 * What `--since-last` builds on for run `runId`.
 *
 * @example
 *   const b = await sinceLastBasis(db, runId); // b.complete?.id, b.view?.id, b.incrementals
 */
export async function sinceLastBasis(db: Kysely<Database>, runId: string): Promise<SinceLastBasis> {
  const complete = basisOf(
    (
      await sql<BasisRow>`select * from (${wholeViews(runId)}) w where w.since_at is null limit 1`.execute(
        db,
      )
    ).rows[0],
  );
  if (!complete) return { complete, view: null, incrementals: 0, staleMisses: 0 };
  const view = basisOf(
    (
      await sql<BasisRow>`select * from (${wholeViews(runId)}) w
        where w.id = ${complete.id} or w.since_run_id = ${complete.id} limit 1`.execute(db)
    ).rows[0],
  );
  const counts = await sql<{ incrementals: number | string; stale: number | string }>`select
    (select count(*) from (${wholeViews(runId)}) w where w.since_run_id = ${complete.id}) as incrementals,
    (select count(*) from ${T.f} where run_id = ${complete.id} and finding = 'stale_incremental') as stale
  `.execute(db);
  const c = counts.rows[0];
  const sample = await sql<{ identity_id: string }>`select identity_id from ${T.f}
    where run_id = ${complete.id} and finding = 'stale_incremental'
    order by identity_id limit 3`.execute(db);
  return {
    complete,
    view,
    incrementals: Number(c?.incrementals ?? 0),
    staleMisses: Number(c?.stale ?? 0),
    staleSample: sample.rows.map((x) => x.identity_id),
  };
}

/** Records how run `runId` read: its `updated_at` bound and the runs it built on. */
export async function recordSince(
  db: Kysely<Database>,
  runId: string,
  since: { readonly at: Date; readonly completeId: string; readonly viewId: string },
): Promise<void> {
  await sql`update ${T.runs} set since_at = ${since.at.toISOString()}::timestamptz,
    since_run_id = ${since.completeId}, view_run_id = ${since.viewId} where id = ${runId}`.execute(
    db,
  );
}

/**
 * Findings whose identity's state must be read again whatever its `updated_at`: those that lead
 * to a create (a missing client control, a wait for the platform's migration of a user_disabled
 * flag that may fall due; a wait for a SERVICE control is not the tool's to end),
 * those history decides (orphans, contested identities, identities remembered unknown), and reads
 * that failed. Report-only findings of an unchanged identity (a missing SERVICE control, an
 * attribute mismatch...) are carried: the same state gives the same finding; deletes (prune)
 * re-read the controls right before they are sent anyway.
 */
export const NEEDS_PLATFORM_STATE = [
  "missing_client_control",
  "awaiting_platform_migration",
  "identity_not_found",
  "read_failed",
  "orphaned_own_control",
  "contested",
];

/** Why an identity is read again by id rather than carried (summary.json `read_by_id_because`). */
export type RereadReason = "source_changed" | "needs_platform_state" | "written";

/** An identity to read again, and the first reason for it. */
export interface Reread {
  readonly identity_id: string;
  readonly reason: RereadReason;
}

/**
 * The identities run `runId` may read by id rather than carry from `viewId`, each with its first
 * reason: candidates whose source row changed since (flags, validity, a row new to the
 * candidates) and that `viewId` does not hold as found (an identity it holds keeps the state it
 * held: a source change moves nothing on the platform; the caller carries those a complete read
 * saw bare, `stillBare`), identities with a finding of {@link NEEDS_PLATFORM_STATE}, and
 * identities any run since `viewId` started wrote to (or meant to) on the same platform.
 * `runId`'s source rows must be stored.
 */
export async function rereadIds(
  db: Kysely<Database>,
  runId: string,
  viewId: string,
): Promise<Reread[]> {
  const kinds = sql.join(NEEDS_PLATFORM_STATE.map((k) => sql`${k}`));
  const r = await sql<Reread & { rank: number }>`
    select identity_id, reason, rank from (
    select s.identity_id, 'source_changed' as reason, 3 as rank from ${T.src} s
    where s.run_id = ${runId} and s.valid and s.identity_id is not null
      and (s.user_disabled or s.admin_disabled)
      and not exists (select 1 from ${T.src} p where p.run_id = ${viewId}
        and p.identity_id = s.identity_id and p.valid
        and p.user_disabled is not distinct from s.user_disabled
        and p.admin_disabled is not distinct from s.admin_disabled)
      and not exists (select 1 from ${T.si} h where h.run_id = ${viewId}
        and h.identity_id = s.identity_id and h.status = 'found')
    union
    select identity_id, 'needs_platform_state', 2 from ${T.f}
    where run_id = ${viewId} and identity_id is not null
      and finding in (${kinds})
      -- the platform's own migration of an admin flag is the platform's change: it is listed
      and not (finding = 'awaiting_platform_migration' and expected_set_by is distinct from 'CLIENT')
    union
    select a.identity_id, 'written', 1 from ${T.a} a where a.run_id in (select r.id from ${T.runs} r
      left join ${T.runs} o on o.id = r.parent_run_id
      where r.id <> ${runId}
        and r.started_at >= (select started_at from ${T.runs} where id = ${viewId})
        and coalesce(r.platform_key, o.platform_key) = (select platform_key from ${T.runs} where id = ${runId}))
    ) x order by identity_id, rank`.execute(db);
  const out: Reread[] = [];
  for (const x of r.rows) {
    if (out[out.length - 1]?.identity_id !== x.identity_id) {
      out.push({ identity_id: x.identity_id, reason: x.reason });
    }
  }
  return out;
}

/** One identity as `viewId` held it (observed there or carried), to be carried forward. */
export interface HeldIdentity {
  readonly identity_id: string;
  readonly platform_user_disabled: boolean | null;
  readonly platform_admin_disabled: boolean | null;
  readonly controls: {
    control_id: string;
    type: string;
    set_by: "client" | "service" | "unknown";
    set_by_raw: string;
    is_overridable: boolean;
    reason_code: string | null;
    reason: string | null;
    created_at: string | null;
    deleted_at: string | null;
  }[];
}

/**
 * A page of the identities `viewId` found, past `after`, but those in `excluded`, with their
 * active controls.
 *
 * @example
 *   const page = await heldPage(db, viewId, excluded, null, 1000);
 */
export async function heldPage(
  db: Kysely<Database>,
  viewId: string,
  excluded: readonly string[],
  after: string | null,
  limit: number,
): Promise<HeldIdentity[]> {
  const from = after === null ? sql`` : sql`and si.identity_id > ${after}`;
  const r = await sql<HeldIdentity & { controls: HeldIdentity["controls"] | string }>`
    select si.identity_id, si.platform_user_disabled, si.platform_admin_disabled,
      coalesce((select json_agg(json_build_object('control_id', c.control_id, 'type', c.type,
          'set_by', c.set_by, 'set_by_raw', c.set_by_raw, 'is_overridable', c.is_overridable,
          'reason_code', c.reason_code, 'reason', c.reason, 'created_at', c.created_at,
          'deleted_at', c.deleted_at) order by c.control_id)
        from ${T.sc} c where c.run_id = ${viewId} and c.identity_id = si.identity_id
          and c.deleted_at is null), '[]'::json) as controls
    from ${T.si} si
    where si.run_id = ${viewId} and si.status = 'found'
      and not (si.identity_id = any(${[...excluded]}::text[])) ${from}
    order by si.identity_id limit ${limit}`.execute(db);
  return r.rows.map((x) => ({
    ...x,
    controls: typeof x.controls === "string" ? JSON.parse(x.controls) : x.controls,
  }));
}

/**
 * Marks what run `runId` carried from `viewId` (every identity it holds as `viewId` held it but
 * those in `read`): `observed_via` `carried`, with the run that observed it. Returns how many.
 */
export async function markCarried(
  db: Kysely<Database>,
  runId: string,
  viewId: string,
  read: readonly string[],
): Promise<number> {
  const r = await sql`update ${T.si} si set observed_via = 'carried',
      observed_run_id = coalesce(p.observed_run_id, p.run_id)
    from ${T.si} p
    where si.run_id = ${runId} and p.run_id = ${viewId} and p.identity_id = si.identity_id
      and p.status = 'found' and si.observed_via = 'listing'
      and not (si.identity_id = any(${[...read]}::text[]))`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

/** Marks identities a run read by id but handed to the findings as a page: `observed_via` `by_id`. */
export async function markReadById(
  db: Kysely<Database>,
  runId: string,
  ids: readonly string[],
): Promise<void> {
  if (ids.length === 0) return;
  await withKeyLookups(db, (trx) =>
    sql`update ${T.si} set observed_via = 'by_id'
      where run_id = ${runId} and identity_id = any(${[...ids]}::text[])`.execute(trx),
  );
}

/** How many identities run `runId` carried, and from how many runs. */
export async function countCarried(db: Kysely<Database>, runId: string): Promise<number> {
  const r = await sql<{ n: number | string }>`select count(*) as n from ${T.si}
    where run_id = ${runId} and observed_via = 'carried'`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

/** Which of `ids` are candidates of run `runId` (a valid source row with a flag true). */
export async function candidatesAmong(
  db: Kysely<Database>,
  runId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const r = await withKeyLookups(db, (trx) =>
    sql<{ identity_id: string }>`select distinct identity_id from ${T.src}
      where run_id = ${runId} and valid and (user_disabled or admin_disabled)
        and identity_id = any(${[...ids]}::text[])`.execute(trx),
  );
  return new Set(r.rows.map((x) => x.identity_id));
}
