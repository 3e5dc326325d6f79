/**
 * The tool's tables as SQL references for raw queries, written once: `${T.f}` is
 * `"controls_migration"."findings"`. Query files take what they need; a table a single file reads
 * stays there.
 */
import { sql } from "kysely";
import { TOOL_TABLES } from "./schema.ts";

export const T = Object.freeze({
  runs: sql.table(TOOL_TABLES.runs),
  src: sql.table(TOOL_TABLES.sourceRows),
  si: sql.table(TOOL_TABLES.snapshotIdentities),
  sc: sql.table(TOOL_TABLES.snapshotControls),
  f: sql.table(TOOL_TABLES.findings),
  a: sql.table(TOOL_TABLES.actions),
  w: sql.table(TOOL_TABLES.worldChanges),
  cf: sql.table(TOOL_TABLES.carriedFindings),
  bare: sql.table(TOOL_TABLES.listedBare),
});
