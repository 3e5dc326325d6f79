import { ProblemError } from "../gateway/problem.ts";
import { MAX_PAGE_SIZE } from "../shared.ts";

export type Query = Record<string, unknown>;

export const MAX_LIMIT = MAX_PAGE_SIZE;
export const DEFAULT_LIMIT = 100;

function one(q: Query, name: string): string | undefined {
  const v = q[name];
  if (v === undefined) return undefined;
  if (Array.isArray(v)) throw new ProblemError(400, `${name} must be given at most once`);
  return String(v);
}

/**
 * `limit`: an integer in [1, 1000], 100 when absent.
 *
 * @example
 *   parseLimit({ limit: "5000" }); // throws ProblemError 400 "limit must be an integer between 1 and 1000, got 5000"
 */
export function parseLimit(q: Query): number {
  const raw = one(q, "limit");
  if (raw === undefined) return DEFAULT_LIMIT;
  const n = /^\d{1,10}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(n >= 1 && n <= MAX_LIMIT)) {
    throw new ProblemError(
      400,
      `limit must be an integer between 1 and ${MAX_LIMIT}, got ${raw === "" ? "an empty value" : raw.slice(0, 40)}`,
    );
  }
  return n;
}

/** A boolean query flag: "true" or "false" (also 1/0), `fallback` when absent. */
export function parseBool(q: Query, name: string, fallback: boolean): boolean {
  const raw = one(q, name);
  if (raw === undefined) return fallback;
  const v = raw.toLowerCase();
  if (v === "true" || v === "1") return true;
  if (v === "false" || v === "0") return false;
  throw new ProblemError(
    400,
    `${name} must be true or false, got ${JSON.stringify(raw.slice(0, 40))}`,
  );
}

/** A required non-empty string parameter. */
export function requireParam(q: Query, name: string): string {
  const raw = one(q, name);
  if (raw === undefined || raw === "") {
    throw new ProblemError(400, `the query parameter ${name} is required`);
  }
  return raw;
}

export function optionalParam(q: Query, name: string): string | undefined {
  const raw = one(q, name);
  return raw === "" ? undefined : raw;
}

/** `order`: ASC or DESC (any case); undefined when absent. */
export function parseOrder(q: Query): "ASC" | "DESC" | undefined {
  const raw = optionalParam(q, "order");
  if (raw === undefined) return undefined;
  const v = raw.toUpperCase();
  if (v === "ASC" || v === "DESC") return v;
  throw new ProblemError(400, `order must be ASC or DESC, got ${JSON.stringify(raw.slice(0, 40))}`);
}
