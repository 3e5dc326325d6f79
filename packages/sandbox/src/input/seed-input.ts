/**
 * What every seeding API shares: metadata, the conflict error (409 on the admin surface), and the
 * shapes of a seed (a list of items, or a synthetic `{count, seed}` request).
 */
import { ProblemError } from "../gateway/problem.ts";
import { FieldReader, isJsonObject, requestBody } from "./body-fields.ts";

/** Client metadata: string keys and values, as on the wire. */
export type Metadata = Record<string, string>;

/** A seed that clashes with stored data: a duplicate id or a ref_id still held. */
export class SeedConflictError extends Error {}

/** Runs a seeding call for the admin surface: its RangeError is a 400, its SeedConflictError a 409. */
export function seeding<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof RangeError) throw new ProblemError(400, err.message);
    if (err instanceof SeedConflictError) throw new ProblemError(409, err.message);
    throw err;
  }
}

/** The items of a list seed, or a RangeError naming `what`. */
export function itemsOf(input: unknown, what: string): readonly unknown[] {
  if (!Array.isArray(input)) throw new RangeError(`${what} must be an array`);
  return input;
}

/** A synthetic seed is an object with a count; a list seed is an array. */
export function isSynthetic(input: unknown): boolean {
  return isJsonObject(input) && "count" in input;
}

/** A synthetic seed's fields, checked: only `known` ones, an integer seed. */
export function synthetic<T>(input: unknown, known: readonly string[]): T {
  const b = new FieldReader(input, "a synthetic seed", known).body;
  if (b.seed !== undefined && !Number.isInteger(b.seed)) {
    throw new RangeError(`seed must be an integer, got ${JSON.stringify(b.seed)}`);
  }
  return b as T;
}

/** The `items` array of an admin seed body, or a 400 saying what it should hold. */
export function itemsField(body: unknown, what: string): never {
  const b = requestBody(body, `{items: [${what}, ...]}`);
  if (!Array.isArray(b.items)) throw new ProblemError(400, `items must be an array of ${what}`);
  return b.items as never;
}
