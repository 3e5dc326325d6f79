/**
 * Field checks shared by the request bodies and admin seeds of every domain, read through one
 * `FieldReader` per body. Each throws a RangeError whose message names the field and what was
 * wrong; routes turn it into a 400 problem.
 */
import { ProblemError } from "../gateway/problem.ts";

export const MAX_METADATA_PAIRS = 6;
export const MAX_METADATA_CHARS = 100;
const MAX_ID_CHARS = 200;

export type Body = Record<string, unknown>;

/** Refuses fields outside `known`, so a misspelt field is never silently ignored. */
export function onlyFields(b: Body, known: readonly string[], what: string): void {
  for (const k of Object.keys(b)) {
    if (!known.includes(k)) {
      throw new RangeError(
        `${what} has an unknown field ${JSON.stringify(k.slice(0, 60))}; known: ${known.join(", ")}`,
      );
    }
  }
}

/** The one "is a JSON object" check: a plain object, not null, not an array. */
export function isJsonObject(v: unknown): v is Body {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The value as a plain object, or a RangeError naming `what` it should have been. */
export function objectOf(v: unknown, what: string): Body {
  if (!isJsonObject(v)) throw new RangeError(`${what} must be a JSON object`);
  return v;
}

/** A request body as a plain object, or a 400 problem saying what it should hold. */
export function requestBody(body: unknown, what: string): Body {
  if (!isJsonObject(body)) throw new ProblemError(400, `the body must be a JSON object: ${what}`);
  return body;
}

function requiredString(b: Body, field: string, max = MAX_ID_CHARS): string {
  const v = b[field];
  if (v === undefined || v === null || v === "") throw new RangeError(`${field} is required`);
  if (typeof v !== "string") throw new RangeError(`${field} must be a string, got ${typeof v}`);
  if (v.length > max) throw new RangeError(`${field} must be at most ${max} characters`);
  return v;
}

/** An optional string; absent, null and "" all mean "not given". */
function optionalString(b: Body, field: string, max = MAX_ID_CHARS): string | undefined {
  const v = b[field];
  if (v === undefined || v === null || v === "") return undefined;
  return requiredString(b, field, max);
}

function enumValue<T extends string>(
  b: Body,
  field: string,
  values: readonly T[],
  fallback?: T,
): T {
  const v = b[field];
  if ((v === undefined || v === null || v === "") && fallback !== undefined) return fallback;
  if (v === undefined || v === null || v === "") {
    throw new RangeError(`${field} is required: one of ${values.join(", ")}`);
  }
  if (typeof v !== "string" || !(values as readonly string[]).includes(v)) {
    throw new RangeError(
      `${field} must be one of ${values.join(", ")}, got ${JSON.stringify(v).slice(0, 60)}`,
    );
  }
  return v as T;
}

/**
 * Client metadata: at most 6 pairs, keys of 1 to 100 characters and string values of at most 100.
 *
 * @example
 *   checkMetadata({ my_id: "42" }, "metadata"); // { my_id: "42" }
 */
function checkMetadata(v: unknown, field: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (typeof v !== "object" || Array.isArray(v)) {
    throw new RangeError(`${field} must be a JSON object of string keys and values`);
  }
  const entries = Object.entries(v as Body);
  if (entries.length > MAX_METADATA_PAIRS) {
    throw new RangeError(
      `${field} has ${entries.length} pairs; at most ${MAX_METADATA_PAIRS} are allowed`,
    );
  }
  const out: Record<string, string> = {};
  for (const [k, value] of entries) {
    if (k.length === 0 || k.length > MAX_METADATA_CHARS) {
      throw new RangeError(
        `${field} keys must have 1 to ${MAX_METADATA_CHARS} characters; ${JSON.stringify(k.slice(0, 40))}${k.length > 40 ? "..." : ""} has ${k.length}`,
      );
    }
    if (typeof value !== "string") {
      throw new RangeError(`${field}.${k} must be a string, got ${typeof value}`);
    }
    if (value.length > MAX_METADATA_CHARS) {
      throw new RangeError(
        `${field}.${k} has ${value.length} characters; at most ${MAX_METADATA_CHARS} are allowed`,
      );
    }
    out[k] = value;
  }
  return out;
}

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

/** An RFC 3339 instant: `ms` truncated to the millisecond, `exact` false when finer digits were cut. */
export interface Instant {
  ms: number;
  exact: boolean;
}

/** Date.parse rolls 2024-02-30 over to March and takes hour 24; a platform refuses both. */
function calendarValid(m: RegExpExecArray): boolean {
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  return mo >= 1 && mo <= 12 && d >= 1 && d <= daysInMonth && h < 24 && mi < 60 && s < 60;
}

/**
 * Parses an RFC 3339 date-time (offset required, up to nanoseconds). Stored times have
 * millisecond precision; `exact` tells a bound with finer digits from one without.
 *
 * @example
 *   parseInstant("2024-01-02T03:04:05.0005Z", "created_at.gte"); // { ms: 1704164645000, exact: false }
 */
export function parseInstant(raw: unknown, field: string): Instant {
  const m = typeof raw === "string" ? RFC3339.exec(raw) : null;
  const ms = m && calendarValid(m) ? Date.parse(raw as string) : Number.NaN;
  if (!m || Number.isNaN(ms)) {
    throw new RangeError(
      `${field} must be an RFC 3339 date-time like 2006-01-02T15:04:05Z, got ${JSON.stringify(raw).slice(0, 60)}`,
    );
  }
  const frac = m[7] ?? "";
  return { ms, exact: /^0*$/.test(frac.slice(3)) };
}

/** An optional RFC 3339 field of a seed, as epoch ms; `fallback` when absent. */
function instantField(b: Body, field: string, fallback: () => number): number {
  const v = b[field];
  if (v === undefined || v === null || v === "") return fallback();
  return parseInstant(v, field).ms;
}

/**
 * The record without its undefined fields, so optional fields are omitted from answers while the
 * literal that builds the record keeps the wire order.
 */
export function compact<T extends object>(record: T): T {
  for (const k of Object.keys(record) as (keyof T)[]) {
    if (record[k] === undefined) delete record[k];
  }
  return record;
}

/** Runs a check and turns its RangeError into a 400 problem with the same words. */
export function badRequest<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof RangeError) throw new ProblemError(400, err.message);
    throw err;
  }
}

/** Prefixes a seed item's RangeError with its position, so a bulk seed names the bad item. */
export function atItem<T>(what: string, index: number, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof RangeError) throw new RangeError(`${what}[${index}]: ${err.message}`);
    throw err;
  }
}

/** An asset code: upper-case letters and digits, starting with a letter. */
export function assetField(b: Body, field: string): string {
  const v = requiredString(b, field, 20);
  if (!/^[A-Z][A-Z0-9]{0,19}$/.test(v)) {
    throw new RangeError(
      `${field} must be an asset code of upper-case letters and digits like BTC or USD, got ${JSON.stringify(v)}`,
    );
  }
  return v;
}

/**
 * A seed or request body read field by field. The body is checked once, on construction, to be a
 * JSON object holding only `known` fields (a misspelt field is refused, never ignored); each read
 * then throws a RangeError naming its field, which routes turn into a 400 and seeding calls name
 * with the item's position.
 *
 * @example
 *   const f = new FieldReader({ profile_id: "p1" }, "a deposit address", ["profile_id", "id"]);
 *   f.required("profile_id"); // "p1"
 *   f.optional("id"); // undefined
 */
export class FieldReader {
  /** The checked body, for values other parsers read (decimals, booleans, nested objects). */
  readonly body: Body;

  /** `what` names the body in its errors ("a deposit address must be a JSON object"). */
  constructor(raw: unknown, what: string, known: readonly string[]) {
    this.body = objectOf(raw, what);
    onlyFields(this.body, known, what);
  }

  /** A non-empty string of at most `max` characters (an id's 200 unless told). */
  required(field: string, max?: number): string {
    return requiredString(this.body, field, max);
  }

  /** An optional string; absent, null and "" all mean "not given". */
  optional(field: string, max?: number): string | undefined {
    return optionalString(this.body, field, max);
  }

  /** One of `values`; `fallback` when absent, else required. */
  oneOf<T extends string>(field: string, values: readonly T[], fallback?: T): T {
    return enumValue(this.body, field, values, fallback);
  }

  /** An RFC 3339 instant as epoch ms; `fallback()` when absent. */
  instant(field: string, fallback: () => number): number {
    return instantField(this.body, field, fallback);
  }

  /** Client metadata (string keys and values, bounded); `{}` when absent. */
  metadata(field: string): Record<string, string> {
    return checkMetadata(this.body[field], field);
  }

  /** An asset code (BTC, USD). */
  asset(field: string): string {
    return assetField(this.body, field);
  }
}
