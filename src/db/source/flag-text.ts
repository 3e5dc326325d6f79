/**
 * How a source flag's text is read: exactly as PostgreSQL's boolean input (`boolin`) reads it, so
 * `'yes'::boolean` in the user's own database and this tool never disagree. Leading and trailing
 * ASCII whitespace (space, tab, LF, VT, FF, CR) is ignored, letters are compared without case (ASCII
 * only), and a value is true when it is `1`, `on` or a non-empty prefix of `true` or `yes`; false
 * when it is `0`, `of`, `off` or a non-empty prefix of `false` or `no`. Anything else (`2`, `o`,
 * `truth`, a non-breaking space around `true`) is not a boolean, and the row is refused.
 */
import { type RawBuilder, sql } from "kysely";

const TRUE_TEXT = new Set(["t", "tr", "tru", "true", "y", "ye", "yes", "on", "1"]);
const FALSE_TEXT = new Set(["f", "fa", "fal", "fals", "false", "n", "no", "of", "off", "0"]);

/** C's isspace in PostgreSQL's server: what boolin skips around the value. */
const PG_SPACE = /^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g;

/** Lower-cases ASCII letters only, as PostgreSQL's pg_strncasecmp compares them. */
const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

/**
 * Parses a flag's text the way PostgreSQL's boolean input does. `undefined` means "not a boolean"
 * (PostgreSQL would refuse it with `invalid input syntax for type boolean`).
 *
 * @example
 *   parseFlagText(" TRUE ") // true
 *   parseFlagText("of") // false
 *   parseFlagText("2") // undefined
 */
export function parseFlagText(text: string): boolean | undefined {
  const t = asciiLower(text.replace(PG_SPACE, ""));
  if (TRUE_TEXT.has(t)) return true;
  if (FALSE_TEXT.has(t)) return false;
  return undefined;
}

/** Every text `parseFlagText` reads as true, trimmed and lower-case. */
export const TRUE_FLAG_TEXTS: readonly string[] = [...TRUE_TEXT];

/** Every text `parseFlagText` reads as false, trimmed and lower-case. */
export const FALSE_FLAG_TEXTS: readonly string[] = [...FALSE_TEXT];

/**
 * SQL that reads a flag column's text as {@link parseFlagText} does and is true when it reads as
 * true: the reader's count agrees with its rows.
 *
 * @example
 *   sql`select count(*) from t where ${flagTextIsTrue(sql.ref("user_disabled"))}`
 */
export function flagTextIsTrue(ref: RawBuilder<unknown>): RawBuilder<unknown> {
  const trimmed = sql`btrim(${ref}::text, ' ' || chr(9) || chr(10) || chr(11) || chr(12) || chr(13))`;
  return sql`translate(${trimmed}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') = any(${TRUE_FLAG_TEXTS}::text[])`;
}
