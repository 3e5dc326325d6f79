/**
 * Tolerant, hand-written parsers from the wire format to the normalised types. Unknown fields are
 * ignored and unknown enum values are kept verbatim; only a missing or mistyped *required* field
 * fails, with a message naming the endpoint and the exact field path. Hand-written rather than a
 * schema library because a 1000-identity page is on the hot path and the messages must be exact.
 */
import { PlatformError } from "./platform-error.ts";
import type { Identity, IdentityControl, SetBy } from "./types.ts";

type Obj = Record<string, unknown>;

export interface Page<T> {
  readonly items: T[];
  /** "" on the last page. */
  readonly nextPageCursor: string;
}

function fail(endpoint: string, path: string, problem: string): never {
  throw new PlatformError({
    kind: "protocol",
    classification: "fatal",
    endpoint,
    detail: `${path} ${problem}`,
  });
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v;
}

function object(v: unknown, endpoint: string, path: string): Obj {
  if (v === undefined) fail(endpoint, path, "is missing");
  if (typeof v !== "object" || v === null || Array.isArray(v))
    fail(endpoint, path, `must be an object, got ${describe(v)}`);
  return v as Obj;
}

function array(o: Obj, key: string, endpoint: string, path: string): unknown[] {
  const v = o[key];
  if (v === undefined || v === null) fail(endpoint, `${path}${key}`, "is missing");
  if (!Array.isArray(v)) fail(endpoint, `${path}${key}`, `must be an array, got ${describe(v)}`);
  return v;
}

function requiredString(o: Obj, key: string, endpoint: string, path: string): string {
  const v = o[key];
  if (v === undefined || v === null || v === "") fail(endpoint, `${path}${key}`, "is missing");
  if (typeof v !== "string")
    fail(endpoint, `${path}${key}`, `must be a string, got ${describe(v)}`);
  return v;
}

function requiredBoolean(o: Obj, key: string, endpoint: string, path: string): boolean {
  const v = o[key];
  if (v === undefined || v === null) fail(endpoint, `${path}${key}`, "is missing");
  if (typeof v !== "boolean")
    fail(endpoint, `${path}${key}`, `must be a boolean, got ${describe(v)}`);
  return v;
}

function optionalString(o: Obj, key: string, endpoint: string, path: string): string | null {
  const v = o[key];
  if (v === undefined || v === null || v === "") return null;
  if (typeof v !== "string")
    fail(endpoint, `${path}${key}`, `must be a string, got ${describe(v)}`);
  return v;
}

function optionalBoolean(o: Obj, key: string, endpoint: string, path: string): boolean | null {
  const v = o[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== "boolean")
    fail(endpoint, `${path}${key}`, `must be a boolean, got ${describe(v)}`);
  return v;
}

/**
 * Both spellings the platform uses (CLIENT / SET_BY_CLIENT, SERVICE / SET_BY_SERVICE); anything
 * else is `unknown`, and callers keep the raw value for the report.
 *
 * @example
 *   normalizeSetBy("SET_BY_SERVICE") // "service"
 *   normalizeSetBy("SET_BY_PARTNER") // "unknown"
 */
export function normalizeSetBy(raw: string): SetBy {
  switch (raw.trim().toUpperCase()) {
    case "CLIENT":
    case "SET_BY_CLIENT":
      return "client";
    case "SERVICE":
    case "SET_BY_SERVICE":
      return "service";
    default:
      return "unknown";
  }
}

/**
 * One control record. `path` prefixes field names in error messages (e.g. `items[3].`).
 *
 * @example
 *   parseControl(json, "POST /v2/identity/controls").setBy // "client"
 */
export function parseControl(raw: unknown, endpoint: string, path = ""): IdentityControl {
  const o = object(raw, endpoint, path === "" ? "body" : path.slice(0, -1));
  const setByValue = o.set_by;
  let setByRaw = "";
  if (typeof setByValue === "string") setByRaw = setByValue;
  else if (setByValue !== undefined && setByValue !== null)
    fail(endpoint, `${path}set_by`, `must be a string, got ${describe(setByValue)}`);
  return {
    id: requiredString(o, "id", endpoint, path),
    type: requiredString(o, "type", endpoint, path),
    setBy: normalizeSetBy(setByRaw),
    setByRaw,
    isOverridable: requiredBoolean(o, "is_overridable", endpoint, path),
    reasonCode: optionalString(o, "reason_code", endpoint, path),
    reason: optionalString(o, "reason", endpoint, path),
    createdAt: optionalString(o, "created_at", endpoint, path),
    deletedAt: optionalString(o, "deleted_at", endpoint, path),
  };
}

/**
 * One identity. `status_details.active_controls` is required: treating a missing list as "no
 * controls" would make the migration create duplicates, so its absence is a protocol error.
 */
export function parseIdentity(raw: unknown, endpoint: string, path = ""): Identity {
  const o = object(raw, endpoint, path === "" ? "body" : path.slice(0, -1));
  const id = requiredString(o, "id", endpoint, path);
  const details = object(o.status_details, endpoint, `${path}status_details`);
  const list = array(details, "active_controls", endpoint, `${path}status_details.`);
  const activeControls: IdentityControl[] = new Array(list.length);
  for (let i = 0; i < list.length; i++) {
    activeControls[i] = parseControl(
      list[i],
      endpoint,
      `${path}status_details.active_controls[${i}].`,
    );
  }
  return {
    id,
    createdAt: optionalString(o, "created_at", endpoint, path),
    userDisabled: optionalBoolean(o, "user_disabled", endpoint, path),
    adminDisabled: optionalBoolean(o, "admin_disabled", endpoint, path),
    activeControls,
  };
}

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
/** `optionalString`'s value when it accepts `v`, else undefined. */
const maybeString = (v: unknown): string | null | undefined =>
  v === undefined || v === null || v === "" ? null : typeof v === "string" ? v : undefined;
const maybeBoolean = (v: unknown): boolean | null | undefined =>
  v === undefined || v === null ? null : typeof v === "boolean" ? v : undefined;
const nonEmpty = (v: unknown): v is string => typeof v === "string" && v !== "";

/**
 * `parseControl` for a well-formed control, building no path text (a listing page holds a thousand
 * identities): undefined for anything `parseControl` might refuse, which then says why.
 */
function quickControl(raw: unknown): IdentityControl | undefined {
  if (!isObj(raw)) return undefined;
  const setByValue = raw.set_by;
  if (!(setByValue === undefined || setByValue === null || typeof setByValue === "string")) {
    return undefined;
  }
  const setByRaw = typeof setByValue === "string" ? setByValue : "";
  const { id, type, is_overridable: isOverridable } = raw;
  const reasonCode = maybeString(raw.reason_code);
  const reason = maybeString(raw.reason);
  const createdAt = maybeString(raw.created_at);
  const deletedAt = maybeString(raw.deleted_at);
  if (!nonEmpty(id) || !nonEmpty(type) || typeof isOverridable !== "boolean") return undefined;
  if (reasonCode === undefined || reason === undefined) return undefined;
  if (createdAt === undefined || deletedAt === undefined) return undefined;
  return {
    id,
    type,
    setBy: normalizeSetBy(setByRaw),
    setByRaw,
    isOverridable,
    reasonCode,
    reason,
    createdAt,
    deletedAt,
  };
}

/** Most identities hold no control: they share one (never written) empty list. */
const NO_CONTROLS: IdentityControl[] = Object.freeze([]) as unknown as IdentityControl[];

/** `parseIdentity` for a well-formed identity, building no path text; see `quickControl`. */
function quickIdentity(raw: unknown): Identity | undefined {
  if (!isObj(raw)) return undefined;
  const { id, status_details: details } = raw;
  if (!nonEmpty(id) || !isObj(details)) return undefined;
  const list = details.active_controls;
  if (!Array.isArray(list)) return undefined;
  let activeControls = NO_CONTROLS;
  if (list.length > 0) {
    activeControls = new Array(list.length);
    for (let i = 0; i < list.length; i++) {
      const c = quickControl(list[i]);
      if (!c) return undefined;
      activeControls[i] = c;
    }
  }
  const createdAt = maybeString(raw.created_at);
  const userDisabled = maybeBoolean(raw.user_disabled);
  const adminDisabled = maybeBoolean(raw.admin_disabled);
  if (createdAt === undefined || userDisabled === undefined || adminDisabled === undefined) {
    return undefined;
  }
  return { id, createdAt, userDisabled, adminDisabled, activeControls };
}

function parsePage<T>(
  raw: unknown,
  endpoint: string,
  item: (v: unknown, endpoint: string, path: string) => T,
  quick: (v: unknown) => T | undefined,
): Page<T> {
  const o = object(raw, endpoint, "body");
  const list = array(o, "items", endpoint, "");
  const items: T[] = new Array(list.length);
  for (let i = 0; i < list.length; i++) {
    // The checked parser, with its path text, only for an item the quick one does not take.
    items[i] = quick(list[i]) ?? item(list[i], endpoint, `items[${i}].`);
  }
  const cursor = o.next_page_cursor;
  if (cursor !== undefined && cursor !== null && typeof cursor !== "string")
    fail(endpoint, "next_page_cursor", `must be a string, got ${describe(cursor)}`);
  return { items, nextPageCursor: cursor ?? "" };
}

/** `{items: IdentityControl[], next_page_cursor}` from `GET /v2/identity/controls`. */
export function parseControlsPage(raw: unknown, endpoint: string): Page<IdentityControl> {
  return parsePage(raw, endpoint, parseControl, quickControl);
}

/** `{items: Identity[], next_page_cursor}` from `GET /v2/identity/identities`. */
export function parseIdentitiesPage(raw: unknown, endpoint: string): Page<Identity> {
  return parsePage(raw, endpoint, parseIdentity, quickIdentity);
}
