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
 * Listing pages held in memory before the source rows are stored, at most: about 30 kB a page of
 * 1000, so 8 MB is about 270,000 listed identities, what a source pass of a million rows lets
 * through when nothing but the machine limits the listing (150,000 to 260,000).
 */
export const HELD_PAGES_BYTES = 8 * 1024 * 1024;

/**
 * The same when the source's kept rows are expected past the index's bound: its pass lets through
 * millions of listed identities, stored meanwhile; 2 MB holds the first 60,000 or so (32 MB held at
 * ten million rows before).
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
