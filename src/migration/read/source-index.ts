/**
 * What a run's source rows say of each identity id, in memory: the findings of a listing page are
 * computed from it and the page itself, with no query. It mirrors `source_rows` (which stays the
 * record): an id is present when a row of it was kept, valid or not, and a valid row carries its
 * two flags. Pure; no I/O.
 *
 * Compact: a lower-case UUID (every id a platform lists, and nine in ten source ids) takes 17 bytes
 * in an open-addressing table of typed arrays, sized to the ids it is told to expect at a load of
 * at most 3/4 (any table size, not a power of two): about 23 bytes an id. 1,150,000 kept rows of a
 * 10,000,000-row source hold 27 MB (a doubling table held 71 MB, and 106 MB while it grew). Any
 * other string (upper case, not a UUID) goes to a plain Map. A lower-case UUID string and its 128
 * bits are one-to-one, so lookups stay exact string equality, as the database compares ids.
 */

/** What the source says of one id. */
export type SourceState =
  | { readonly valid: true; readonly userDisabled: boolean; readonly adminDisabled: boolean }
  | { readonly valid: false };

const PRESENT = 1;
const VALID = 2;
const USER = 4;
const ADMIN = 8;
/** A listing page held the id (kept across `set`). */
const LISTED = 16;
const STATE = 15;

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
/** The table's load at most: linear probing stays short (8.5 probes for an absent id, 2.5 present). */
const MAX_LOAD = 0.75;
const MIN_SLOTS = 1024;
/** Slots for `ids` ids at {@link MAX_LOAD}. */
const slotsFor = (ids: number): number => Math.max(MIN_SLOTS, Math.ceil(ids / MAX_LOAD) + 1);
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

const HEX = "0123456789abcdef";

/** The lower-case UUID text of the four words at `at`. */
function uuidText(array: Uint32Array, at: number): string {
  let hex = "";
  for (let w = 0; w < 4; w++) {
    const v = array[at + w] as number;
    for (let shift = 28; shift >= 0; shift -= 4) hex += HEX[(v >>> shift) & 15];
  }
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Listed ids kept in 16 bytes each (lower-case UUIDs; any other id as its string), in order: the
 * pages a listing reads before the source pass is complete wait in memory this way.
 *
 * @example
 *   const ids = new PackedIds();
 *   ids.push("6a591c0c-3e0f-4494-8559-5dc864060d39");
 *   ids.toArray(); // ["6a591c0c-3e0f-4494-8559-5dc864060d39"]
 */
export class PackedIds {
  #bytes = new Uint32Array(64 * 4);
  #count = 0;
  /** Ids that are not lower-case UUIDs, by position. */
  readonly #others = new Map<number, string>();

  get length(): number {
    return this.#count;
  }

  /** Bytes held (typed array and other ids, roughly). */
  get bytes(): number {
    let n = this.#bytes.byteLength;
    for (const id of this.#others.values()) n += 2 * id.length + 32;
    return n;
  }

  push(id: string): void {
    if ((this.#count + 1) * 4 > this.#bytes.length) {
      const grown = new Uint32Array(this.#bytes.length * 2);
      grown.set(this.#bytes);
      this.#bytes = grown;
    }
    if (uuidWords(id)) this.#bytes.set(words, this.#count * 4);
    else this.#others.set(this.#count, id);
    this.#count += 1;
  }

  toArray(): string[] {
    const out: string[] = new Array(this.#count);
    for (let i = 0; i < this.#count; i++) {
      const other = this.#others.get(i);
      if (other !== undefined) {
        out[i] = other;
        continue;
      }
      out[i] = uuidText(this.#bytes, i * 4);
    }
    return out;
  }
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
  #keys = new Uint32Array(4 * MIN_SLOTS);
  #codes = new Uint8Array(MIN_SLOTS);
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

  /**
   * Makes room for `ids` ids at once, in one table of that size: the table does not grow (and
   * rehash everything, tens of milliseconds on the event loop at 100,000 ids, and the old and new
   * tables both held meanwhile) while a pass fills it.
   */
  reserve(ids: number): void {
    const slots = slotsFor(ids);
    if (slots > this.#codes.length) this.#resize(slots);
  }

  /** Records what the source says of `id`; a later call for the same id replaces it. */
  set(id: string, state: SourceState): void {
    const code = encode(state);
    // Grown first: growing rehashes through `words`.
    if (this.#used + 1 > this.#codes.length * MAX_LOAD) this.#resize(slotsFor(2 * this.#used));
    if (!uuidWords(id)) {
      this.#others.set(id, code | ((this.#others.get(id) ?? 0) & LISTED));
      return;
    }
    const slot = this.#find(this.#keys, this.#codes);
    const was = this.#codes[slot] as number;
    if (was === 0) {
      this.#keys.set(words, slot * 4);
      this.#used += 1;
    }
    this.#codes[slot] = code | (was & LISTED);
  }

  /** What the source says of `id`, or undefined when no row of it was kept. */
  get(id: string): SourceState | undefined {
    const code = uuidWords(id)
      ? this.#codes[this.#find(this.#keys, this.#codes)]
      : this.#others.get(id);
    return code ? DECODED[code & STATE] : undefined;
  }

  /** Notes that a listing page held `id` (an id the index does not hold is left out). */
  markListed(id: string): void {
    if (!uuidWords(id)) {
      const code = this.#others.get(id);
      if (code) this.#others.set(id, code | LISTED);
      return;
    }
    const slot = this.#find(this.#keys, this.#codes);
    const code = this.#codes[slot] as number;
    if (code) this.#codes[slot] = code | LISTED;
  }

  /** Marks `id` listed; false when it was already (a repeat), or the index does not hold it. */
  markListedOnce(id: string): boolean {
    if (!uuidWords(id)) {
      const code = this.#others.get(id);
      if (!code || code & LISTED) return false;
      this.#others.set(id, code | LISTED);
      return true;
    }
    const slot = this.#find(this.#keys, this.#codes);
    const code = this.#codes[slot] as number;
    if (!code || code & LISTED) return false;
    this.#codes[slot] = code | LISTED;
    return true;
  }

  /**
   * The valid candidates (a flag true) no listing page held, in batches of at most `size` ids:
   * once the listing is complete, what is left to classify.
   */
  *unlistedCandidates(size: number): Generator<string[]> {
    const wanted = (code: number) =>
      (code & (VALID | LISTED)) === VALID && (code & (USER | ADMIN)) !== 0;
    let batch: string[] = [];
    const codes = this.#codes;
    for (let slot = 0; slot < codes.length; slot++) {
      if (!wanted(codes[slot] as number)) continue;
      batch.push(uuidText(this.#keys, slot * 4));
      if (batch.length >= size) {
        yield batch;
        batch = [];
      }
    }
    for (const [id, code] of this.#others) {
      if (!wanted(code)) continue;
      batch.push(id);
      if (batch.length >= size) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }

  /** The slot holding `words`, or the empty slot where it would go (linear probing). */
  #find(keys: Uint32Array, codes: Uint8Array): number {
    const n = codes.length;
    const a = words[0];
    const b = words[1];
    const c = words[2];
    const d = words[3];
    for (let slot = hashWords() % n; ; slot = slot + 1 === n ? 0 : slot + 1) {
      if (codes[slot] === 0) return slot;
      const k = slot * 4;
      if (keys[k] === a && keys[k + 1] === b && keys[k + 2] === c && keys[k + 3] === d) return slot;
    }
  }

  #resize(slots: number): void {
    const oldKeys = this.#keys;
    const oldCodes = this.#codes;
    const keys = new Uint32Array(slots * 4);
    const codes = new Uint8Array(slots);
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
