/**
 * A noun in the number its count asks for: "1 page", "2 pages". Counts of 1 (and -1) take the
 * singular; 0 and the rest the plural.
 *
 * @example
 *   `${n} listing ${noun(n, "request")}` // "1 listing request"
 *   noun(2, "identity", "identities") // "identities"
 */
export function noun(count: number, one: string, many = `${one}s`): string {
  return Math.abs(count) === 1 ? one : many;
}
