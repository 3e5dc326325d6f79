/**
 * The name of every migration of `index.ts`, in order, without loading one of them (nor kysely):
 * what `status` on PostgreSQL compares with a database's applied migrations, at node's speed.
 * A new migration is added here too; `test/unit/migrations.names.test.ts` fails until it is.
 */
export const MIGRATION_NAMES: readonly string[] = Object.freeze([
  "0001_initial",
  "0002_run_lifecycle",
  "0003_run_control",
  "0004_request_series",
  "0005_listed_identities",
  "0006_bulk_tables_without_run_keys",
  "0008_platform_legacy_fields",
  "0009_world_changes",
  "0010_source_reread_event",
  "0011_source_id_sets",
  "0012_listed_claims",
  "0014_run_world_identity",
  "0015_observed_via",
  "0016_platform_keyed_lineage",
  "0017_closing_sends",
  "0018_incremental_reads",
  "0019_listed_bare",
]);
