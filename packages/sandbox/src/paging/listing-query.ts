/**
 * Query parsing shared by the listings (identities, quote executions, deposit addresses): strict
 * parameter names, repeated-parameter lists, created_at bounds, order/order_by and keyset walks
 * whose cursors are bound to the listing's filters.
 */
import { createHash } from "node:crypto";
import { ProblemError } from "../gateway/problem.ts";
import { badRequest, parseInstant } from "../input/body-fields.ts";
import { optionalParam, parseOrder, type Query } from "../input/query-params.ts";
import type { CursorCodec } from "./cursor-codec.ts";
import type { KeysetPosition, TimeBounds } from "./keyset-index.ts";

/** Most entries one list filter (profile_ids, ids, ...) takes. */
export const MAX_LIST_ENTRIES = 100;

/** A misspelt filter would silently widen the listing, so unknown parameters are refused. */
export function rejectUnknownParams(q: Query, allowed: readonly string[]): void {
  for (const name of Object.keys(q)) {
    if (!allowed.includes(name)) {
      throw new ProblemError(
        400,
        `unknown query parameter ${JSON.stringify(name.slice(0, 60))}; this endpoint takes ${allowed.join(", ")}`,
      );
    }
  }
}

/**
 * A list filter given by repeating the parameter (`ids=a&ids=b`); empty values are ignored.
 *
 * @example
 *   listParam({ ids: ["a", "b"] }, "ids"); // ["a", "b"]
 */
export function listParam(q: Query, name: string, max = MAX_LIST_ENTRIES): string[] {
  const raw = q[name];
  if (raw === undefined) return [];
  const values = (Array.isArray(raw) ? raw : [raw]).map(String).filter((v) => v !== "");
  if (values.length > max) {
    throw new ProblemError(
      400,
      `${name} takes at most ${max} entries, got ${values.length}; repeat the parameter once per entry`,
    );
  }
  return values;
}

/**
 * A list filter whose entries are enum values (`networks=ETHEREUM&networks=SOLANA`), as given.
 *
 * @example
 *   enumListParam({ control_types: "SELL_ONLY" }, "control_types", ["SELL_ONLY", "FROZEN"]); // ["SELL_ONLY"]
 */
export function enumListParam(q: Query, name: string, values: readonly string[]): string[] {
  const given = listParam(q, name);
  for (const v of given) {
    if (!values.includes(v)) {
      throw new ProblemError(
        400,
        `${name} entries must be among ${values.join(", ")}, got ${JSON.stringify(v.slice(0, 40))}`,
      );
    }
  }
  return given;
}

/** One value of an enum-valued query parameter, or undefined when absent. */
export function enumParam<T extends string>(
  q: Query,
  name: string,
  values: readonly T[],
): T | undefined {
  const raw = optionalParam(q, name);
  if (raw === undefined) return undefined;
  if (!(values as readonly string[]).includes(raw)) {
    throw new ProblemError(
      400,
      `${name} must be one of ${values.join(", ")}, got ${JSON.stringify(raw.slice(0, 60))}`,
    );
  }
  return raw as T;
}

export type Bound = "lt" | "lte" | "eq" | "gte" | "gt";

/**
 * A time predicate, and its inclusive bounds in ms, from RFC 3339 bounds (query parameter → kind). Times are stored to the
 * millisecond; a bound with finer digits is applied exactly (gte 05.0005 admits 05.001, not 05.000).
 * Bounds that exclude each other match nothing.
 *
 * @example
 *   const { match } = timeRange({ "created_at.gte": "2024-01-01T00:00:00Z" }, { "created_at.gte": "gte" });
 */
export function timeRange(
  q: Query,
  spec: Readonly<Record<string, Bound>>,
): { match: (ms: number) => boolean; given: Record<string, string>; bounds: TimeBounds } {
  let lo = Number.NEGATIVE_INFINITY;
  let hi = Number.POSITIVE_INFINITY;
  const given: Record<string, string> = {};
  for (const [name, kind] of Object.entries(spec)) {
    const raw = optionalParam(q, name);
    if (raw === undefined) continue;
    given[name] = raw;
    const { ms, exact } = badRequest(() => parseInstant(raw, name));
    if (kind === "gte") lo = Math.max(lo, exact ? ms : ms + 1);
    else if (kind === "gt") lo = Math.max(lo, ms + 1);
    else if (kind === "lte") hi = Math.min(hi, ms);
    else if (kind === "lt") hi = Math.min(hi, exact ? ms - 1 : ms);
    else if (exact) {
      lo = Math.max(lo, ms);
      hi = Math.min(hi, ms);
    } else lo = Number.POSITIVE_INFINITY;
  }
  return { match: (t) => t >= lo && t <= hi, given, bounds: { lo, hi } };
}

/** `order_by`: only CREATED_AT, the keyset these listings page on. */
export function checkOrderBy(q: Query): void {
  const raw = optionalParam(q, "order_by");
  if (raw !== undefined && raw !== "CREATED_AT") {
    throw new ProblemError(
      400,
      `order_by must be CREATED_AT, got ${JSON.stringify(raw.slice(0, 40))}`,
    );
  }
}

/** A short digest of a listing's filters, so a cursor cannot be replayed against other filters. */
function fingerprint(filters: unknown): string {
  const text = JSON.stringify(filters);
  let digest = recentFingerprints.get(text);
  if (digest === undefined) {
    // A walk repeats its filters on every page: hashing them once per walk, not per page, keeps a
    // hash off the hot path. The memo is small and simply starts over when full.
    if (recentFingerprints.size >= 1024) recentFingerprints.clear();
    digest = createHash("sha256").update(text).digest("base64url").slice(0, 22);
    recentFingerprints.set(text, digest);
  }
  return digest;
}

const recentFingerprints = new Map<string, string>();

/**
 * The walk position a page_cursor carries. The request must repeat the filters the cursor was
 * issued for; `order` may be omitted (the cursor's) but not changed.
 */
function readCursor(
  cursors: CursorCodec,
  raw: string | undefined,
  listing: string,
  filters: string,
  order: "ASC" | "DESC" | undefined,
): { order: "ASC" | "DESC" | undefined; after: KeysetPosition | undefined } {
  if (raw === undefined) return { order, after: undefined };
  const c = cursors.decode(raw);
  if (c?.k !== "x" || c.l !== listing) {
    throw new ProblemError(400, "page_cursor is not a valid cursor of this listing");
  }
  if (c.f !== filters) {
    throw new ProblemError(
      400,
      "page_cursor belongs to another listing: repeat the filters (and path) of the request that returned it",
    );
  }
  if (order !== undefined && order !== c.o) {
    throw new ProblemError(400, `page_cursor was issued for order ${c.o}, not ${order}`);
  }
  return { order: c.o, after: { t: c.t, id: c.id } };
}

function nextCursor(
  cursors: CursorCodec,
  listing: string,
  filters: string,
  order: "ASC" | "DESC",
  page: { items: readonly { createdAtMs: number; id: string }[]; more: boolean },
): string {
  const last = page.items[page.items.length - 1];
  if (!page.more || !last) return "";
  return cursors.encode({
    k: "x",
    l: listing,
    f: filters,
    o: order,
    t: last.createdAtMs,
    id: last.id,
  });
}

/** Where one request of a keyset listing stands in its walk. */
export interface ListingWalk {
  /** The walk's order: the request's, else the cursor's, else DESC (newest first). */
  readonly order: "ASC" | "DESC";
  /** The keyset position the page starts after; undefined on the first page. */
  readonly after: KeysetPosition | undefined;
  /** The page's next_page_cursor, bound to the same listing, filters and order; "" after the last. */
  nextCursor(page: {
    items: readonly { createdAtMs: number; id: string }[];
    more: boolean;
  }): string;
}

/**
 * The walk a listing request continues: its `order` and `page_cursor` (or `cursor`, read by a
 * listing that pages otherwise too), checked against the listing's name and a fingerprint of its
 * filters, so a cursor is never replayed against other filters or another order.
 *
 * @example
 *   const walk = listingWalk(ctx.cursors, q, "deposit-addresses", { lists, time: time.given });
 *   const page = addresses.records.page(walk.order, walk.after, limit, match);
 *   return { items: page.items, next_page_cursor: walk.nextCursor(page) };
 */
export function listingWalk(
  cursors: CursorCodec,
  q: Query,
  listing: string,
  filters: unknown,
  cursor = optionalParam(q, "page_cursor"),
): ListingWalk {
  const key = fingerprint(filters);
  const pos = readCursor(cursors, cursor, listing, key, parseOrder(q));
  const order = pos.order ?? "DESC";
  return {
    order,
    after: pos.after,
    nextCursor: (page) => nextCursor(cursors, listing, key, order, page),
  };
}

/** An optional integer query parameter in [min, max]. */
export function intParam(q: Query, name: string, min: number, max: number): number | undefined {
  const raw = optionalParam(q, name);
  if (raw === undefined) return undefined;
  const n = /^\d{1,10}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(n >= min && n <= max)) {
    throw new ProblemError(
      400,
      `${name} must be an integer between ${min} and ${max}, got ${JSON.stringify(raw.slice(0, 40))}`,
    );
  }
  return n;
}
