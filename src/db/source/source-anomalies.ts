/**
 * Pure classification of legacy source rows: which rows are anomalies, why, and whether the row may
 * still be acted on. No I/O here, so the rules are unit-tested directly.
 */

import type { NonUuidPolicy } from "../../config.ts";
import { MAX_IDENTITY_ID_LENGTH } from "../../contract/index.ts";
import { BIDI_CONTROL, escapeInvisible } from "../../visible-text.ts";
import { parseFlagText } from "./flag-text.ts";

/**
 * Every anomaly kind with the sentence the reports show. `rejects` tells whether the row is kept
 * away from the migration; `non_uuid_id` depends on the `--non-uuid-ids` policy instead.
 */
export const ANOMALY_KINDS = Object.freeze({
  null_id: { rejects: true, reason: "The id is NULL, so the row names no identity." },
  empty_id: { rejects: true, reason: "The id is empty or only whitespace." },
  control_chars_in_id: {
    rejects: true,
    reason: "The id contains control characters (tab, newline, NUL, ESC, DEL, ...).",
  },
  bidi_controls_in_id: {
    rejects: true,
    reason:
      "The id contains bidirectional control characters (U+202A–U+202E, U+2066–U+2069, ...), which make it display differently from what it is.",
  },
  id_too_long: { rejects: true, reason: "The id is longer than 256 characters." },
  duplicate_id: {
    rejects: true,
    reason:
      "The id appears on more than one row; every copy is reported and none is migrated, because there is no way to know which flags are right.",
  },
  null_flag: {
    rejects: true,
    reason: "A flag is NULL; it is never guessed to be false.",
  },
  invalid_flag: {
    rejects: true,
    reason:
      "A flag holds a value that PostgreSQL would not read as a boolean (accepted, as in PostgreSQL: true/false, yes/no, on/off, 1/0 and prefixes such as t/f, any case, surrounding spaces ignored).",
  },
  non_uuid_id: {
    rejects: false,
    reason: "The id is not a lower-case UUID, the form platform identity ids take.",
  },
} as const);

export type AnomalyKind = keyof typeof ANOMALY_KINDS;
export const ANOMALY_KIND_NAMES = Object.freeze(Object.keys(ANOMALY_KINDS) as AnomalyKind[]);

/** Ids longer than this are refused: no platform id is anywhere near, and reports stay readable. */
export const MAX_ID_LENGTH = MAX_IDENTITY_ID_LENGTH;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UUID_ANY_CASE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

/** A row as the reader selects it: every column cast to text (NULL stays null). */
export interface RawSourceRow {
  readonly id: string | null;
  readonly userDisabled: string | null;
  readonly adminDisabled: string | null;
}

export interface ClassifiedRow {
  readonly identityId: string | null;
  readonly userDisabled: boolean | null;
  readonly adminDisabled: boolean | null;
  readonly anomaly: AnomalyKind | null;
  readonly anomalyDetail: string | null;
  /**
   * True when the migration may act on the row: no anomaly, or only a warning (`non_uuid_id` under
   * `--non-uuid-ids warn`). A valid row has a non-null id and two non-null flags.
   */
  readonly valid: boolean;
}

/**
 * Parses a flag exactly as PostgreSQL's boolean input does (see `flag-text.ts`), from the text of a
 * boolean, integer or text column. `undefined` means "not a boolean".
 *
 * @example
 *   parseFlag("true") // true
 *   parseFlag(" 0 ") // false
 *   parseFlag("2") // undefined
 */
export function parseFlag(text: string | null): boolean | null | undefined {
  return text === null ? null : parseFlagText(text);
}

export { FALSE_FLAG_TEXTS, TRUE_FLAG_TEXTS } from "./flag-text.ts";

/** A lower-case UUID, as a PostgreSQL regular expression: an id `classifyRow` finds no fault with. */
export const LOWER_UUID_PATTERN = UUID.source;

/**
 * Classifies one row. Rejecting anomalies win over warnings, and id problems over flag problems, so
 * the single reported kind is the most fundamental one. `copies` is how many rows share the id.
 *
 * @example
 *   classifyRow({ id: null, userDisabled: "true", adminDisabled: "false" }, "warn", 1)
 *   // { anomaly: "null_id", valid: false, ... }
 */
export function classifyRow(
  raw: RawSourceRow,
  policy: NonUuidPolicy,
  copies: number,
): ClassifiedRow {
  const ud = parseFlag(raw.userDisabled);
  const ad = parseFlag(raw.adminDisabled);
  // Nine rows in ten: a lower-case UUID (so no control character, not empty, not too long) on
  // one row, with two readable flags. Decided without building anything else.
  if (
    copies === 1 &&
    typeof ud === "boolean" &&
    typeof ad === "boolean" &&
    raw.id !== null &&
    UUID.test(raw.id)
  ) {
    return {
      identityId: raw.id,
      userDisabled: ud,
      adminDisabled: ad,
      anomaly: null,
      anomalyDetail: null,
      valid: true,
    };
  }
  const base = {
    identityId: raw.id,
    userDisabled: ud ?? null,
    adminDisabled: ad ?? null,
  };
  const reject = (anomaly: AnomalyKind, detail: string): ClassifiedRow => ({
    ...base,
    anomaly,
    anomalyDetail: detail,
    valid: false,
  });

  const id = raw.id;
  if (id === null) return reject("null_id", "id is NULL");
  if (id.trim() === "") return reject("empty_id", `id is ${JSON.stringify(id)}`);
  if (CONTROL_CHARS.test(id)) return reject("control_chars_in_id", `id is ${preview(id)}`);
  if (BIDI_CONTROL.test(id)) return reject("bidi_controls_in_id", `id is ${preview(id)}`);
  if (id.length > MAX_ID_LENGTH)
    return reject("id_too_long", `id has ${id.length} characters: ${preview(id)}`);
  if (copies > 1) return reject("duplicate_id", `id appears on ${copies} rows`);

  const flagProblems: string[] = [];
  let flagKind: AnomalyKind | undefined;
  for (const [name, parsed, text] of [
    ["user_disabled", ud, raw.userDisabled],
    ["admin_disabled", ad, raw.adminDisabled],
  ] as const) {
    if (parsed === null) {
      flagProblems.push(`${name} is NULL`);
      flagKind ??= "null_flag";
    } else if (parsed === undefined) {
      flagProblems.push(`${name} is ${preview(text ?? "")}`);
      flagKind = "invalid_flag";
    }
  }
  if (flagKind) return reject(flagKind, flagProblems.join("; "));

  if (!UUID.test(id) && policy !== "accept") {
    const detail = UUID_ANY_CASE.test(id)
      ? `id ${preview(id)} is a UUID with upper-case letters; platform ids are lower-case`
      : `id ${preview(id)} is not a UUID`;
    return {
      ...base,
      anomaly: "non_uuid_id",
      anomalyDetail: detail,
      valid: policy === "warn",
    };
  }
  return { ...base, anomaly: null, anomalyDetail: null, valid: true };
}

/** JSON-quoted, control and bidi characters shown as escapes, cut to a readable length. */
function preview(text: string): string {
  const cut = text.length > 60 ? `${text.slice(0, 60)}…` : text;
  return escapeInvisible(JSON.stringify(cut));
}
