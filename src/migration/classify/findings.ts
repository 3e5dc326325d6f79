import type { Kysely } from "kysely";
import {
  type IdentityStateRow,
  identityStatesPage,
  insertInvalidRowFindings,
} from "../../db/journal/finding-queries.ts";
import { analyzeRunTables } from "../../db/journal/snapshot-queries.ts";
import type { PendingActionOf } from "../../db/journal/store-classified.ts";
import type {
  Database,
  NewFinding,
  NewSnapshotControl,
  NewSnapshotIdentity,
} from "../../db/schema.ts";
import {
  dueForCreate,
  forgetSettledSightings,
  toolCreatedAmongDuplicates,
  WAIT_FOR_PLATFORM,
  type WaitPolicy,
} from "../execute/platform-wait.ts";
import {
  classifyIdentity,
  type Finding,
  type IdentityState,
  type ObservedControl,
} from "./classify.ts";
import { type ClassifiedWriter, writeClassified } from "./grouped-writes.ts";
import type { LegacyFlags } from "./mapping.ts";

const awaitingClient = (f: Finding) =>
  f.finding === "awaiting_platform_migration" && f.expected?.owner === "tool";

export interface FindingsOptions {
  /** Journal create actions for missing client controls (apply, reconcile). */
  readonly journalCreates: boolean;
  /** Journal delete actions for prunable unexpected client controls (--prune). */
  readonly journalDeletes: boolean;
  /**
   * The snapshot is a complete SELL_ONLY listing (filtered) of a plan made before filtered read
   * its unlisted candidates by id: a candidate it does not hold has no active SELL_ONLY, and its
   * existence is checked when its create is sent. Otherwise an identity never observed counts as
   * a read failure.
   */
  readonly unlistedHoldNoSellOnly?: boolean;
  /** Whether to wait for the platform's own migration (default: wait). */
  readonly waitForPlatform?: WaitPolicy;
}

/** Added to the detail of a finding whose identity the SELL_ONLY listing did not hold. */
export const UNLISTED_DETAIL =
  "absent from the SELL_ONLY listing: no active SELL_ONLY; existence is checked at apply time";

const PAGE = 1000;

export function toIdentityState(
  row: IdentityStateRow,
  unlistedHoldNoSellOnly = false,
): IdentityState {
  const controls: ObservedControl[] = row.controls.map((c) => ({
    controlId: c.control_id,
    type: c.type,
    setBy: c.set_by === "client" || c.set_by === "service" ? c.set_by : "unknown",
    setByRaw: c.set_by_raw,
    isOverridable: c.is_overridable,
  }));
  const source =
    row.has_source && row.user_disabled !== null && row.admin_disabled !== null
      ? { userDisabled: row.user_disabled, adminDisabled: row.admin_disabled }
      : null;
  const platformLegacy =
    row.platform_user_disabled == null && row.platform_admin_disabled == null
      ? null
      : { userDisabled: row.platform_user_disabled, adminDisabled: row.platform_admin_disabled };
  if (row.status === null && unlistedHoldNoSellOnly) {
    return { identityId: row.identity_id, source, platform: "found", controls, platformLegacy };
  }
  return {
    identityId: row.identity_id,
    source,
    // An identity never observed (a candidate left over by an interrupted read) counts as a read failure.
    platform: row.status ?? "error",
    platformDetail: row.status ? row.error : "the platform state of this identity was not read",
    controls,
    platformLegacy,
  };
}

function findingRow(
  runId: string,
  row: IdentityStateRow,
  f: Finding,
  unlistedHoldNoSellOnly: boolean,
): NewFinding {
  const unlisted = unlistedHoldNoSellOnly && row.status === null;
  const detail = unlisted ? [f.detail, UNLISTED_DETAIL].filter(Boolean).join("; ") : f.detail;
  return {
    run_id: runId,
    identity_id: row.identity_id,
    finding: f.finding,
    user_disabled: row.user_disabled,
    admin_disabled: row.admin_disabled,
    expected_type: f.expected?.type ?? null,
    expected_set_by: f.expected ? f.expected.setBy.toUpperCase() : null,
    expected_is_overridable: f.expected?.isOverridable ?? null,
    observed_control_id: f.observed?.controlId ?? null,
    observed_set_by: f.observed?.setByRaw ?? null,
    observed_is_overridable: f.observed?.isOverridable ?? null,
    other_active_controls: f.otherActiveControls || null,
    detail: detail || null,
    platform_user_disabled: row.platform_user_disabled ?? null,
    platform_admin_disabled: row.platform_admin_disabled ?? null,
    prunable: f.prunable,
  };
}

/**
 * Joins source ⟗ snapshot page by page, applies the diff rules to each identity, and writes the
 * findings (and, for writers, the journal's pending actions) in one pass of constant memory.
 * Used once every identity has been read (per-identity reads, an adopted plan); a listing
 * classifies as it goes instead (`findings-stream.ts`).
 */
export async function computeFindings(
  db: Kysely<Database>,
  runId: string,
  options: FindingsOptions,
): Promise<{ identities: number; actions: number }> {
  await insertInvalidRowFindings(db, runId);
  let after: string | null = null;
  let identities = 0;
  let actions = 0;
  for (;;) {
    const rows = await identityStatesPage(db, runId, after, PAGE);
    if (rows.length === 0) break;
    after = rows[rows.length - 1]?.identity_id ?? null;
    identities += rows.length;
    actions += await storeFindings(db, runId, rows, options);
  }
  // For the executor's queries; a plan's are taken beside its report (`pipeline.ts`).
  if (options.journalCreates || options.journalDeletes) await analyzeRunTables(db, "journal");
  return { identities, actions };
}

/** Observed identities and their controls, stored with their findings. */
export interface SnapshotRows {
  readonly identities: readonly NewSnapshotIdentity[];
  readonly controls: readonly NewSnapshotControl[];
}

/**
 * Applies the diff rules to some identities' rows of the join and writes their findings and, for
 * writers, the journal's pending actions, in one statement (`storeClassified`): a range is
 * classified whole or not at all. With `snapshot`, what was observed of them is stored in the same
 * statement (a listing page and its findings are committed together). `write` sends that
 * statement: by default at once, or grouped with others (`grouped-writes.ts`). Returns the
 * actions journaled.
 *
 * @example
 *   await storeFindings(db, runId, rows, options, { identities, controls });
 */
export async function storeFindings(
  db: Kysely<Database>,
  runId: string,
  rows: readonly IdentityStateRow[],
  options: FindingsOptions,
  snapshot?: SnapshotRows,
  write: ClassifiedWriter = writeClassified(db),
): Promise<number> {
  const pairs: { row: IdentityStateRow; finding: Finding }[] = [];
  const states = rows.map((row) => toIdentityState(row, options.unlistedHoldNoSellOnly));
  const toolCreated = await toolCreatedAmongDuplicates(db, states);
  const policy = options.waitForPlatform ?? WAIT_FOR_PLATFORM;
  const waitForPlatform = policy.kind !== "no-wait";
  rows.forEach((row, i) => {
    const state = { ...(states[i] as IdentityState), toolCreated, waitForPlatform };
    for (const finding of classifyIdentity(state)) pairs.push({ row, finding });
  });
  const due = await dueForCreate(db, runId, policy, pairs);
  await forgetSettledSightings(db, runId, pairs);
  const actions: PendingActionOf[] = [];
  for (const { row, finding } of pairs) {
    const create = finding.create || (awaitingClient(finding) && due.has(row.identity_id));
    if (options.journalCreates && create && finding.expected) {
      actions.push({
        identity_id: row.identity_id,
        finding: finding.finding,
        observed_control_id: finding.observed?.controlId ?? null,
        action: "create",
        control_type: finding.expected.type,
        control_key: `${finding.expected.type}:${finding.expected.setBy}`,
      });
    }
    if (options.journalDeletes && finding.prunable && finding.observed) {
      actions.push({
        identity_id: row.identity_id,
        finding: finding.finding,
        observed_control_id: finding.observed.controlId,
        action: "delete",
        control_type: finding.observed.type,
        control_key: finding.observed.controlId,
      });
    }
  }
  return write({
    identities: snapshot?.identities ?? [],
    controls: snapshot?.controls ?? [],
    findings: pairs.map((p) =>
      findingRow(runId, p.row, p.finding, options.unlistedHoldNoSellOnly === true),
    ),
    actions,
  });
}

/**
 * The source flags the findings stage recorded with the finding behind a journaled delete: the
 * delete guard weighs them against the controls it re-reads. Null when the finding is unknown or had
 * no valid source row; the guard then keeps the control.
 *
 * @example
 *   const flags = await findingFlags(db, action.run_id, action.finding_id);
 *   // { userDisabled: false, adminDisabled: true }
 */
export async function findingFlags(
  db: Kysely<Database>,
  runId: string,
  findingId: number | null,
): Promise<LegacyFlags | null> {
  if (findingId === null) return null;
  // One row by primary key. It belongs with the other finding queries in
  // db/journal/finding-queries.ts; it sits here while that folder is being reworked elsewhere.
  const r = await db
    .selectFrom("controls_migration.findings")
    .select(["user_disabled", "admin_disabled"])
    .where("id", "=", findingId)
    .where("run_id", "=", runId)
    .executeTakeFirst();
  if (!r || r.user_disabled === null || r.admin_disabled === null) return null;
  return { userDisabled: r.user_disabled, adminDisabled: r.admin_disabled };
}
