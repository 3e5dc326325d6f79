/**
 * Kysely types of the tables that hold what a run read and classified: its interesting source rows,
 * the platform's identities and controls as observed (snapshot), the identities a listing read
 * before the source rows were stored, and the findings. Part of `Database` in `schema.ts`, whose
 * conventions (timestamps, jsonb, bigint) apply here too; keep in step with `migrations/`.
 */
import type { ColumnType, Generated } from "kysely";
import type { Timestamp } from "./column-types.ts";

export type SnapshotStatus = "found" | "not_found" | "error";
/**
 * How a run observed an identity: on a listing page, or read by its id (0015); or not at all,
 * its last observed state carried forward by an incremental run (`carried`, 0018).
 */
export type ObservedVia = "listing" | "by_id" | "carried";
export type SetBy = "client" | "service" | "unknown";

/** The interesting source rows of a run: any flag true, or an anomaly. */
export interface SourceRowsTable {
  run_id: string;
  /** 1-based order in which the reader delivered the row. */
  seq: number;
  identity_id: string | null;
  user_disabled: boolean | null;
  admin_disabled: boolean | null;
  /** An `AnomalyKind` from `source-reader.ts`, or null for a clean row. */
  anomaly: string | null;
  anomaly_detail: string | null;
  /**
   * Extra column (not in the original design): the reader's `valid` verdict. False when the row
   * must never be acted on; true for clean rows and warn-level anomalies; null if not recorded.
   */
  valid: boolean | null;
}

export interface SnapshotIdentitiesTable {
  run_id: string;
  identity_id: string;
  status: SnapshotStatus;
  error: string | null;
  observed_at: Timestamp;
  /** The platform's legacy fields as read with the identity; null: not read (0008). */
  platform_user_disabled: ColumnType<boolean | null, boolean | null | undefined, boolean | null>;
  platform_admin_disabled: ColumnType<boolean | null, boolean | null | undefined, boolean | null>;
  /** How this run observed it, recorded as it did; null: the read failed, or an older version (0015). */
  observed_via: ColumnType<ObservedVia | null, ObservedVia | null | undefined, ObservedVia | null>;
  /** A carried row: the run that observed it; null: this run (0018). */
  observed_run_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** Identities a listing read before the source rows were stored, until they are sorted (0005). */
export interface ListedIdentitiesTable {
  run_id: string;
  identity_id: string;
}

/** Listed identities a run classified that its source index does not hold, once each (0012). */
export interface ListedClaimsTable {
  run_id: string;
  identity_id: string;
  /** The claiming statement's number within the run. */
  batch: number;
}

/** Identities a listing showed bare (no control, both legacy fields false), in chunks (0019). */
export interface ListedBareTable {
  run_id: string;
  chunk: number;
  /** Lower-case UUIDs, 16 bytes each. */
  uuids: Uint8Array;
  /** Any other id. */
  others: string[];
}

export interface SnapshotControlsTable {
  run_id: string;
  identity_id: string;
  control_id: string;
  type: string;
  set_by: SetBy;
  /** The platform's value verbatim (CLIENT, SET_BY_CLIENT, ...). */
  set_by_raw: string;
  is_overridable: boolean;
  reason_code: string | null;
  reason: string | null;
  created_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  deleted_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface FindingsTable {
  id: Generated<number>;
  run_id: string;
  identity_id: string | null;
  finding: string;
  user_disabled: boolean | null;
  admin_disabled: boolean | null;
  expected_type: string | null;
  expected_set_by: string | null;
  expected_is_overridable: boolean | null;
  observed_control_id: string | null;
  observed_set_by: string | null;
  observed_is_overridable: boolean | null;
  other_active_controls: string | null;
  detail: string | null;
  /** The platform's legacy fields the finding was classified with (0008). */
  platform_user_disabled: ColumnType<boolean | null, boolean | null | undefined, boolean | null>;
  platform_admin_disabled: ColumnType<boolean | null, boolean | null | undefined, boolean | null>;
  /** The diff rules' verdict: `reconcile --prune` may delete the observed control (0002). */
  prunable: ColumnType<boolean, boolean | undefined, boolean>;
}
