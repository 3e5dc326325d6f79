/**
 * What the findings stream observes of identities, before their findings: the observation rows of
 * a listed page (only what matters to a finding) and of the candidates no page listed (from what
 * reading them by id answered), with their snapshot rows, and the state row each is classified by.
 */
import type { IdentityStateRow, StoredObservation } from "../../db/journal/finding-queries.ts";
import type { NewSnapshotControl, NewSnapshotIdentity } from "../../db/schema.ts";
import type { ListedIdentity, ReadIdentity } from "../read/listed-identity.ts";
import type { SourceState } from "../read/source-index.ts";
import type { SourceView } from "../read/source-view.ts";
import { legacyTrue, snapshotIdentity } from "../read/three-way-listing.ts";

export const holdsSellOnly = (controls: readonly { readonly type: string }[]) =>
  controls.some((c) => c.type === "SELL_ONLY");

/** The findings stage looks at a valid candidate (a flag true) and at a SELL_ONLY holder. */
export const isCandidate = (s: SourceState | undefined) =>
  s?.valid === true && (s.userDisabled || s.adminDisabled);

export function stateRow(
  identityId: string,
  source: SourceState | undefined,
  observed: Omit<StoredObservation, "identity_id">,
): IdentityStateRow {
  const valid = source?.valid === true ? source : null;
  return {
    identity_id: identityId,
    user_disabled: valid ? valid.userDisabled : null,
    admin_disabled: valid ? valid.adminDisabled : null,
    has_source: valid !== null,
    ...observed,
  };
}

const asObserved = (controls: readonly NewSnapshotControl[]) =>
  controls.map((c) => ({
    control_id: c.control_id,
    type: c.type,
    set_by: c.set_by,
    set_by_raw: c.set_by_raw,
    is_overridable: c.is_overridable,
  }));

/**
 * What is observed of the candidates no page listed, from what reading them by id answered (after
 * a bulk listing, "not found" without a read): the snapshot rows stored with their findings.
 */
export function observeUnlisted(runId: string, reads: readonly ReadIdentity[]) {
  const observed: StoredObservation[] = [];
  const identities: NewSnapshotIdentity[] = [];
  const controls: NewSnapshotControl[] = [];
  let notFound = 0;
  for (const r of reads) {
    if (r.status === "found") {
      const row = snapshotIdentity(runId, r.identity, "by_id");
      identities.push(row);
      controls.push(...r.identity.controls);
      observed.push({
        identity_id: r.identity.id,
        status: "found",
        error: null,
        platform_user_disabled: row.platform_user_disabled ?? null,
        platform_admin_disabled: row.platform_admin_disabled ?? null,
        controls: asObserved(r.identity.controls),
      });
      continue;
    }
    if (r.status === "not_found") notFound += 1;
    const via = r.status === "not_found" ? ("by_id" as const) : null;
    const row = { run_id: runId, identity_id: r.id, status: r.status, error: r.error };
    identities.push({ ...row, observed_via: via });
    observed.push({
      ...row,
      platform_user_disabled: null,
      platform_admin_disabled: null,
      controls: [],
    });
  }
  return { observed, snapshot: { identities, controls }, notFound };
}

/**
 * What is observed of a listed page, from the page and what the source says of it: the snapshot
 * rows stored with its findings.
 */
export function observeListed(
  runId: string,
  identities: readonly ListedIdentity[],
  sources: Pick<SourceView, "get">,
) {
  const stored: NewSnapshotIdentity[] = [];
  const controls: NewSnapshotControl[] = [];
  const observed: StoredObservation[] = [];
  for (const i of identities) {
    const source = sources.get(i.id);
    // A listed identity with no control that the source does not hold matters to no finding,
    // unless the platform's legacy fields mark it (its source row is looked up).
    if (i.controls.length === 0 && source === undefined && !legacyTrue(i.legacy)) continue;
    const row = snapshotIdentity(runId, i, "listing");
    stored.push(row);
    controls.push(...i.controls);
    observed.push({
      identity_id: i.id,
      status: "found",
      error: null,
      platform_user_disabled: row.platform_user_disabled ?? null,
      platform_admin_disabled: row.platform_admin_disabled ?? null,
      controls: asObserved(i.controls),
    });
  }
  return { observed, snapshot: { identities: stored, controls } };
}
