/**
 * Column types shared by the Kysely table types (`schema.ts`, `observation-tables.ts`): timestamptz
 * columns (filled in by the database, or nullable) and jsonb columns (parsed on select, a JSON
 * string on insert/update, with or without a database default). See `schema.ts` for the
 * conventions both backends agree on.
 */
import type { ColumnType } from "kysely";

/** A timestamptz that the database fills in (`default now()`), overridable on insert/update. */
export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** A nullable timestamptz. */
export type NullableTimestamp = ColumnType<
  Date | null,
  Date | string | null | undefined,
  Date | string | null
>;
/** A jsonb column: parsed on select, a JSON string on insert/update. */
export type Json<T> = ColumnType<T, string, string>;
/** A jsonb column with a database default. */
export type JsonWithDefault<T> = ColumnType<T, string | undefined, string>;
