import type { SetBySpellingName } from "./types.ts";

/** The set_by values one sandbox writes: its own spelling, and the other one (drift). */
export interface SetBySpelling {
  readonly client: string;
  readonly service: string;
  /** The spelling the sandbox does not use, for the `set_by_other_spelling` drift. */
  readonly other: { readonly client: string; readonly service: string };
}

const PUBLISHED = { client: "SET_BY_CLIENT", service: "SET_BY_SERVICE" } as const;
const SHORT = { client: "CLIENT", service: "SERVICE" } as const;

/**
 * The set_by values for a spelling: the published schema's SET_BY_CLIENT / SET_BY_SERVICE, or
 * the interface description's CLIENT / SERVICE.
 *
 * @example
 *   setBySpelling("published").client; // "SET_BY_CLIENT"
 *   setBySpelling("short").other.service; // "SET_BY_SERVICE"
 */
export function setBySpelling(name: SetBySpellingName = "published"): SetBySpelling {
  if (name !== "published" && name !== "short") {
    throw new RangeError(`setBySpelling must be published or short, got ${JSON.stringify(name)}`);
  }
  return name === "published" ? { ...PUBLISHED, other: SHORT } : { ...SHORT, other: PUBLISHED };
}
