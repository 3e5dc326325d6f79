/**
 * Whether the tool waits for the platform's own migration (issue 27): an identity whose
 * user_disabled is true here and on the platform, without its CLIENT SELL_ONLY, is
 * `awaiting_platform_migration`. By default the tool creates nothing for it (the platform will);
 * `--no-wait-for-platform` creates it at once; `--wait-for-platform-s N` creates it once the
 * first sighting (journaled in `platform_wait_sightings`) is older than N seconds.
 */
import type { Kysely } from "kysely";
import {
  anySightings,
  forgetNotAwaiting,
  forgetSightingsOffSource,
  sightAwaiting,
  toolCreatedControls,
} from "../../db/journal/three-way-queries.ts";
import type { Database } from "../../db/schema.ts";
import type { Finding, ObservedControl } from "../classify/classify.ts";

export type WaitPolicy =
  | { readonly kind: "wait" }
  | { readonly kind: "no-wait" }
  | { readonly kind: "wait-s"; readonly seconds: number };

export const WAIT_FOR_PLATFORM: WaitPolicy = Object.freeze({ kind: "wait" });

/**
 * The policy the flags ask for: `--no-wait-for-platform` wins over `--wait-for-platform-s`.
 *
 * @example
 *   waitPolicy(true, 600) // { kind: "wait-s", seconds: 600 }
 */
export function waitPolicy(wait: boolean, waitS: number | null | undefined): WaitPolicy {
  if (!wait) return { kind: "no-wait" };
  return waitS === null || waitS === undefined
    ? WAIT_FOR_PLATFORM
    : { kind: "wait-s", seconds: waitS };
}

const awaitingOf = (f: Finding, owner: "tool" | "platform") =>
  f.finding === "awaiting_platform_migration" && f.expected?.owner === owner;

type Pairs = readonly {
  readonly row: { readonly identity_id: string };
  readonly finding: Finding;
}[];

/**
 * Of a batch's findings, the identities whose awaited CLIENT control the tool creates now, by the
 * policy. Unless `no-wait`, the batch's awaiting identities are sighted on the run's platform
 * (both sides, the first sighting kept); under `wait-s` those sighted long enough ago are returned.
 */
export async function dueForCreate(
  db: Kysely<Database>,
  runId: string,
  policy: WaitPolicy,
  pairs: Pairs,
): Promise<ReadonlySet<string>> {
  // Not waiting at all, the diff rules call the control missing and create it themselves.
  if (policy.kind === "no-wait") return NONE;
  const client = pairs.filter((p) => awaitingOf(p.finding, "tool")).map((p) => p.row.identity_id);
  const service = pairs
    .filter((p) => awaitingOf(p.finding, "platform"))
    .map((p) => p.row.identity_id);
  if (client.length + service.length === 0) return NONE;
  // Asked before this run records its first sighting (see `sightingsBeforeRun`).
  await sightingsBeforeRun(db, runId);
  // Every run that reads the platform records its sightings (a plan's too): a later wait counts
  // from the first one. Only `wait-s` creates those sighted long enough ago.
  const seconds = policy.kind === "wait-s" ? policy.seconds : null;
  const ids = { user_disabled: client, admin_disabled: service };
  const due = await sightAwaiting(db, runId, ids, seconds);
  return policy.kind === "wait-s" ? due : NONE;
}

/**
 * Forgets the first sightings of a batch's identities on each side where none of their findings
 * is awaiting any more (in sync, migrated, the flag cleared), whatever the policy, so that an
 * identity that comes back to awaiting later waits afresh. One statement a batch of a whole
 * classification (identities whose findings are complete), none for an empty one.
 */
export async function forgetSettledSightings(
  db: Kysely<Database>,
  runId: string,
  pairs: Pairs,
): Promise<void> {
  if (pairs.length === 0 || !(await sightingsBeforeRun(db, runId))) return;
  const awaiting = { user_disabled: new Set<string>(), admin_disabled: new Set<string>() };
  for (const p of pairs) {
    if (awaitingOf(p.finding, "tool")) awaiting.user_disabled.add(p.row.identity_id);
    if (awaitingOf(p.finding, "platform")) awaiting.admin_disabled.add(p.row.identity_id);
  }
  const ids = new Set(pairs.map((p) => p.row.identity_id));
  await forgetNotAwaiting(db, runId, {
    user_disabled: [...ids].filter((id) => !awaiting.user_disabled.has(id)),
    admin_disabled: [...ids].filter((id) => !awaiting.admin_disabled.has(id)),
  });
}

/**
 * Once a run's source pass is complete (not an adopted plan's candidates): forgets the first
 * sightings of identities whose source flag is no longer true, whatever the policy, so that one
 * awaiting again later waits afresh. Those whose platform legacy field was cleared too are in no
 * batch `forgetSettledSightings` sees. No statement when no sighting is recorded.
 */
export async function forgetSightingsOfClearedFlags(
  db: Kysely<Database>,
  runId: string,
): Promise<number> {
  return (await sightingsBeforeRun(db, runId)) ? forgetSightingsOffSource(db, runId) : 0;
}

/**
 * The control ids this tool created among identities holding two or more active CLIENT
 * SELL_ONLY (one query for the batch, none without such an identity): duplicates are pruned
 * the tool's own first.
 */
export async function toolCreatedAmongDuplicates(
  db: Kysely<Database>,
  states: readonly { readonly identityId: string; readonly controls: readonly ObservedControl[] }[],
): Promise<ReadonlySet<string>> {
  const ids = states
    .filter(
      (s) => s.controls.filter((c) => c.type === "SELL_ONLY" && c.setBy === "client").length > 1,
    )
    .map((s) => s.identityId);
  return ids.length === 0 ? NONE : toolCreatedControls(db, ids);
}

const NONE: ReadonlySet<string> = new Set();

/** Per database handle and run: whether sightings were recorded before the run's first one here. */
const heldBefore = new WeakMap<Kysely<Database>, Map<string, Promise<boolean>>>();

/**
 * Whether any sighting was recorded before this process's first sighting for the run: asked once
 * a run and process, before the run records one. Without one, no batch of the run needs its
 * forgetting statement: a batch forgets only its own identities, each classified in one batch of
 * the run, and the run's own sightings are of identities awaiting when sighted (their source flag
 * true), so none of them is to be forgotten by the same run. A resumed run asks again in its new
 * process, and finds the sightings its first process made. This spared a 1,000,000-identity plan
 * 251 deletes, each a look-up among the 60,000 sightings it had recorded so far.
 */
function sightingsBeforeRun(db: Kysely<Database>, runId: string): Promise<boolean> {
  const runs = heldBefore.get(db) ?? new Map<string, Promise<boolean>>();
  heldBefore.set(db, runs);
  const known = runs.get(runId);
  if (known !== undefined) return known;
  const asked = anySightings(db);
  runs.set(runId, asked);
  // A failed question is asked again by the next batch.
  asked.catch(() => runs.delete(runId));
  return asked;
}
