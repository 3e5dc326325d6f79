/**
 * Findings that carry only an identity and a sentence (`contested`, `stale_incremental`): no
 * flags, no expected or observed control, no action. One insert of every row, in statements of
 * 1,000.
 */
import type { Kysely } from "kysely";
import { type Database, TOOL_TABLES } from "../schema.ts";

/**
 * Stores one `finding` of run `runId` per row.
 *
 * @example
 *   await insertNoteFindings(db, runId, "stale_incremental", [{ identity_id, detail }]);
 */
export async function insertNoteFindings(
  db: Kysely<Database>,
  runId: string,
  finding: string,
  rows: readonly { readonly identity_id: string; readonly detail: string }[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += 1000) {
    const values = rows.slice(i, i + 1000).map((m) => ({
      run_id: runId,
      identity_id: m.identity_id,
      finding,
      user_disabled: null,
      admin_disabled: null,
      expected_type: null,
      expected_set_by: null,
      expected_is_overridable: null,
      observed_control_id: null,
      observed_set_by: null,
      observed_is_overridable: null,
      other_active_controls: null,
      detail: m.detail,
    }));
    await db.insertInto(TOOL_TABLES.findings).values(values).execute();
  }
}
