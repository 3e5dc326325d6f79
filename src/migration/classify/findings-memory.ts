/**
 * What the findings stream holds in memory while the source pass runs beside the listing: the
 * listing pages that wait for the source rows (`held-pages.ts`), and the source index
 * (`source-index.ts`). Past the index's bound the source pass is long (about one row in nine is
 * kept, so more than a million rows), and the listing stores most of its early pages in the
 * database whatever is held: so few are held then, and memory stays the same whatever the
 * source's size. Pure.
 */
import type { SourceIndex } from "../read/source-index.ts";
import type { FindingsMemory } from "./findings-stream-types.ts";

/**
 * Listing pages held in memory before the source rows are stored, at most, while the source's
 * kept rows fit the index: about 30 kB a page of 1000, so 32 MB is about a million listed
 * identities, more than a source pass of a million rows lets through even when nothing but the
 * machine limits the listing. Kept as it was: a smaller cap makes PGlite (a slower source pass,
 * one statement at a time) store and catch up pages that memory held before, and past the bound
 * the cap below keeps memory flat anyway.
 */
export const HELD_PAGES_BYTES = 32 * 1024 * 1024;

/**
 * The same when the source's kept rows are expected past the index's bound: its pass lets through
 * millions of listed identities, stored meanwhile whatever is held; 2 MB holds the first 60,000 or
 * so (32 MB held at ten million rows before).
 */
export const PAST_BOUND_HELD_BYTES = 2 * 1024 * 1024;

/**
 * Bytes of pages to hold: as `memory` says, else by the ids expected in the index (reserved there
 * too, so its table is sized once).
 *
 * @example
 *   const bytes = heldPagesBytes({ expectedIds: 1_150_000 }, index); // 2 MB: past the bound
 */
export function heldPagesBytes(memory: FindingsMemory, index: SourceIndex): number {
  if (memory.expectedIds !== undefined) index.reserve(memory.expectedIds);
  if (memory.memoryBytes !== undefined) return memory.memoryBytes;
  return memory.expectedIds !== undefined && memory.expectedIds > index.limit
    ? PAST_BOUND_HELD_BYTES
    : HELD_PAGES_BYTES;
}
