/**
 * Lower-case canonical UUIDs as four 32-bit words, for the compact tables of listed and source ids
 * (`source-index.ts`, `packed-ids.ts`): a UUID string and its 128 bits are one-to-one, so tables
 * keyed by the words still compare ids by exact string equality, as the database does. Pure.
 */

const UUID_LENGTH = 36;

/** The words of the id last read by {@link uuidWords} (one shared buffer: no allocation). */
export const words = new Uint32Array(4);

/** Fills `words` with the 128 bits of a lower-case canonical UUID; false for any other string. */
export function uuidWords(id: string): boolean {
  if (id.length !== UUID_LENGTH) return false;
  let w = 0;
  let acc = 0;
  let nibbles = 0;
  for (let i = 0; i < UUID_LENGTH; i++) {
    const c = id.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 45) return false; // "-"
      continue;
    }
    let v: number;
    if (c >= 48 && c <= 57) v = c - 48;
    else if (c >= 97 && c <= 102) v = c - 87;
    else return false;
    acc = ((acc << 4) | v) >>> 0;
    if (++nibbles === 8) {
      words[w++] = acc;
      acc = 0;
      nibbles = 0;
    }
  }
  return true;
}

/** A hash of `words`: ids need not be random (synthetic, sequential). */
export function hashWords(): number {
  // murmur3's finalizer over the four words mixed together.
  const h = (words[0] as number) ^ Math.imul(words[1] as number, 0x9e3779b1);
  return fmix32(
    h ^ Math.imul(words[2] as number, 0x85ebca6b) ^ Math.imul(words[3] as number, 0xc2b2ae35),
  );
}

/** murmur3's 32-bit finalizer: every bit of `x` reaches every bit of the result. */
export function fmix32(x: number): number {
  let h = x;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const HEX = "0123456789abcdef";

/** The lower-case UUID text of the four words at `at`. */
export function uuidText(array: Uint32Array, at: number): string {
  let hex = "";
  for (let w = 0; w < 4; w++) {
    const v = array[at + w] as number;
    for (let shift = 28; shift >= 0; shift -= 4) hex += HEX[(v >>> shift) & 15];
  }
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
