/**
 * Every row of every table of the tool's schema (`controls_migration`), as text: what a test
 * searches for a secret that must never be stored.
 *
 * @example
 *   const h = await target.open();
 *   try { assert.ok(!(await dumpToolSchema(h)).includes(secret)); } finally { await h.close(); }
 */
import { sql } from "kysely";
import type { DatabaseHandle } from "../../src/db/connection/connect.ts";

export async function dumpToolSchema(h: DatabaseHandle): Promise<string> {
  const tables = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = 'controls_migration' order by 1`.execute(h.db);
  const parts: string[] = [];
  for (const { name } of tables.rows) {
    const rows = await sql<{
      row: string;
    }>`select t::text as row from ${sql.table(`controls_migration.${name}`)} t`.execute(h.db);
    parts.push(`-- ${name}`, ...rows.rows.map((r) => r.row));
  }
  return parts.join("\n");
}
