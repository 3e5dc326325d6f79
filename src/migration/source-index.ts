/**
 * What a run's source rows say of each identity id, in memory: the findings of a listing page are
 * computed from it and the page itself, with no query. It mirrors `source_rows` (which stays the
 * record): an id is present when a row of it was kept, valid or not, and a valid row carries its
 * two flags. Pure; no I/O.
 *
 * Compact: a lower-case UUID (every id a platform lists, and nine in ten source ids) takes 17 bytes
 * in an open-addressing table of typed arrays, about 34 bytes an id at the table's load; 115,000
 * kept rows of a 1,000,000-row source hold 4 MB. Any other string (upper case, not a UUID) goes to
 * a plain Map. A lower-case UUID string and its 128 bits are one-to-one, so lookups stay exact
 * string equality, as the database compares ids.
 */

/** What the source says of one id. */
export type SourceState =
  | { readonly valid: true; readonly userDisabled: boolean; readonly adminDisabled: boolean }
  | { readonly valid: false };

const PRESENT = 1;
const VALID = 2;
const USER = 4;
const ADMIN = 8;

const encode = (s: SourceState): number =>
  s.valid ? PRESENT | VALID | (s.userDisabled ? USER : 0) | (s.adminDisabled ? ADMIN : 0) : PRESENT;

const INVALID: SourceState = Object.freeze({ valid: false });
const DECODED: SourceState[] = Array.from({ length: 16 }, (_, code) =>
  code & VALID
    ? Object.freeze({
        valid: true,
        userDisabled: (code & USER) !== 0,
        adminDisabled: (code & ADMIN) !== 0,
      })
    : INVALID,
);

const UUID_LENGTH = 36;
const words = new Uint32Array(4);

/** Fills `words` with the 128 bits of a lower-case canonical UUID; false for any other string. */
function uuidWords(id: string): boolean {
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

function hashWords(): number {
  // murmur3's finalizer over the four words: ids need not be random (synthetic, sequential).
  let h = (words[0] as number) ^ Math.imul(words[1] as number, 0x9e3779b1);
  h ^= Math.imul(words[2] as number, 0x85ebca6b) ^ Math.imul(words[3] as number, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * An identity id → {@link SourceState} map of bounded footprint.
 *
 * @example
 *   const index = new SourceIndex();
 *   index.set("6a591c0c-3e0f-4494-8559-5dc864060d39", { valid: true, userDisabled: true, adminDisabled: false });
 *   index.get("6a591c0c-3e0f-4494-8559-5dc864060d39"); // { valid: true, userDisabled: true, ... }
 *   index.get("not-kept"); // undefined: no row of this id was kept
 */
export class SourceIndex {
  #keys = new Uint32Array(4 * 1024);
  #codes = new Uint8Array(1024);
  #used = 0;
  readonly #others = new Map<string, number>();

  /** Ids held. */
  get size(): number {
    return this.#used + this.#others.size;
  }

  /** Bytes of the typed arrays (the Map of other ids aside). */
  get tableBytes(): number {
    return this.#keys.byteLength + this.#codes.byteLength;
  }

  /** Records what the source says of `id`; a later call for the same id replaces it. */
  set(id: string, state: SourceState): void {
    const code = encode(state);
    // Grown first: growing rehashes through `words`.
    if ((this.#used + 1) * 2 > this.#codes.length) this.#grow();
    if (!uuidWords(id)) {
      this.#others.set(id, code);
      return;
    }
    const slot = this.#find(this.#keys, this.#codes);
    if (this.#codes[slot] === 0) {
      this.#keys.set(words, slot * 4);
      this.#used += 1;
    }
    this.#codes[slot] = code;
  }

  /** What the source says of `id`, or undefined when no row of it was kept. */
  get(id: string): SourceState | undefined {
    const code = uuidWords(id)
      ? this.#codes[this.#find(this.#keys, this.#codes)]
      : this.#others.get(id);
    return code ? DECODED[code] : undefined;
  }

  /** The slot holding `words`, or the empty slot where it would go (linear probing). */
  #find(keys: Uint32Array, codes: Uint8Array): number {
    const mask = codes.length - 1;
    const [a, b, c, d] = words as unknown as [number, number, number, number];
    for (let slot = hashWords() & mask; ; slot = (slot + 1) & mask) {
      if (codes[slot] === 0) return slot;
      const k = slot * 4;
      if (keys[k] === a && keys[k + 1] === b && keys[k + 2] === c && keys[k + 3] === d) return slot;
    }
  }

  #grow(): void {
    const oldKeys = this.#keys;
    const oldCodes = this.#codes;
    const keys = new Uint32Array(oldKeys.length * 2);
    const codes = new Uint8Array(oldCodes.length * 2);
    for (let slot = 0; slot < oldCodes.length; slot++) {
      const code = oldCodes[slot] as number;
      if (code === 0) continue;
      words.set(oldKeys.subarray(slot * 4, slot * 4 + 4));
      const to = this.#find(keys, codes);
      keys.set(words, to * 4);
      codes[to] = code;
    }
    this.#keys = keys;
    this.#codes = codes;
  }
}
