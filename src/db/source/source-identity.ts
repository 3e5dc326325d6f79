/**
 * What a run's source is, beyond the text of `--source-relation` (issue 51): the relation that
 * text names in this session (the search_path, set by the URL's `options`, `PGOPTIONS` or a
 * role's default, decides a bare name), by schema-qualified name and object id, in which database.
 * Resolved when a run starts and recorded with it; a resume or an apply of a plan compares it
 * with its own.
 */
import { resolve } from "node:path";
import { sql } from "kysely";
import type { SourceConfig } from "../../config.ts";
import type { DatabaseHandle } from "../connection/database-handle.ts";
import { locateRelation } from "./source-relation.ts";

export interface SourceIdentity {
  /** `schema.table` as the catalog names it; null when the text names no relation here. */
  readonly relation: string | null;
  /** Its object id (text: an oid outgrows nothing, but a bigint column reads back as text). */
  readonly oid: string | null;
  /**
   * The database: `pglite:<absolute data folder>` (every PGlite folder starts from one template,
   * so its system identifier names no folder), or `<system_identifier>/<current_database()>` on
   * PostgreSQL, the identifier `?` where the role may not read `pg_control_system()`.
   */
  readonly database: string;
}

/**
 * Resolves the source relation and the database's identity in this session.
 *
 * @example
 *   const id = await readSourceIdentity(handle, source);
 *   // { relation: "public.identities", oid: "16402", database: "7312…/app" }
 */
export async function readSourceIdentity(
  handle: DatabaseHandle,
  source: SourceConfig,
): Promise<SourceIdentity> {
  const rel = await locateRelation(handle.db, source.relation);
  return {
    relation: rel ? `${rel.nspname}.${rel.relname}` : null,
    oid: rel ? String(rel.oid) : null,
    database: await databaseIdentity(handle),
  };
}

async function databaseIdentity(handle: DatabaseHandle): Promise<string> {
  if (handle.backend === "pglite") {
    const dir = handle.pglite?.dataDir;
    return `pglite:${dir === undefined ? "memory" : resolve(dir)}`;
  }
  const name = await sql<{ name: string }>`select current_database() as name`
    .execute(handle.db)
    .then((r) => r.rows[0]?.name ?? "?");
  // pg_control_system() needs superuser or pg_monitor-like rights on many servers: unreadable is `?`.
  const system = await sql<{
    id: string;
  }>`select system_identifier::text as id from pg_control_system()`
    .execute(handle.db)
    .then((r) => r.rows[0]?.id ?? "?")
    .catch(() => "?");
  return `${system}/${name}`;
}

/**
 * Whether two database identities may be the same database: equal, or equal by name where either
 * side could not read the system identifier.
 */
export function sameDatabase(a: string, b: string): boolean {
  if (a === b) return true;
  const [as, ...an] = a.split("/");
  const [bs, ...bn] = b.split("/");
  if (a.startsWith("pglite:") || b.startsWith("pglite:")) return false;
  return (as === "?" || bs === "?") && an.join("/") === bn.join("/");
}
