/**
 * Which Kysely instances reach the embedded PGlite, for the few queries whose fastest shape
 * differs by backend (`diffPage`). A transaction's own instance is not marked: it gets the shape
 * that suits PostgreSQL, which is correct on both.
 *
 * @example
 *   markEmbedded(db); // where the PGlite handle is made
 *   isEmbedded(db); // true
 */
const embedded = new WeakSet<object>();

export function markEmbedded(db: object): void {
  embedded.add(db);
}

export function isEmbedded(db: object): boolean {
  return embedded.has(db);
}
