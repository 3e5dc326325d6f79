/**
 * Every migration the code knows, in order. A static record rather than a folder scan, so it works
 * the same from the sources and in the compiled `dist/`. Forward-only: never edit or remove an entry once
 * released; add the next number instead.
 */
import type { Migration } from "kysely";
import * as initial from "./0001-initial.ts";
import * as runLifecycle from "./0002-run-lifecycle.ts";
import * as runControl from "./0003-run-control.ts";
import * as requestSeries from "./0004-request-series.ts";
import * as listedIdentities from "./0005-listed-identities.ts";
import * as bulkTablesWithoutRunKeys from "./0006-bulk-tables-without-run-keys.ts";
import * as platformLegacyFields from "./0008-platform-legacy-fields.ts";
import * as worldChanges from "./0009-world-changes.ts";
import * as sourceRereadEvent from "./0010-source-reread-event.ts";
import * as sourceIdSets from "./0011-source-id-sets.ts";
import * as listedClaims from "./0012-listed-claims.ts";
import * as runWorldIdentity from "./0014-run-world-identity.ts";
import * as observedVia from "./0015-observed-via.ts";
import * as platformKeyedLineage from "./0016-platform-keyed-lineage.ts";
import * as closingSends from "./0017-closing-sends.ts";
import * as incrementalReads from "./0018-incremental-reads.ts";
import * as listedBare from "./0019-listed-bare.ts";

export const migrations: Readonly<Record<string, Migration>> = Object.freeze({
  "0001_initial": initial,
  "0002_run_lifecycle": runLifecycle,
  "0003_run_control": runControl,
  "0004_request_series": requestSeries,
  "0005_listed_identities": listedIdentities,
  "0006_bulk_tables_without_run_keys": bulkTablesWithoutRunKeys,
  "0008_platform_legacy_fields": platformLegacyFields,
  "0009_world_changes": worldChanges,
  "0010_source_reread_event": sourceRereadEvent,
  "0011_source_id_sets": sourceIdSets,
  "0012_listed_claims": listedClaims,
  "0014_run_world_identity": runWorldIdentity,
  "0015_observed_via": observedVia,
  "0016_platform_keyed_lineage": platformKeyedLineage,
  "0017_closing_sends": closingSends,
  "0018_incremental_reads": incrementalReads,
  "0019_listed_bare": listedBare,
});
