/**
 * What a run's source rows say of each identity id, in memory: the findings of a listing page are
 * computed from it and the page itself, with no query. It mirrors `source_rows` (which stays the
 * record): an id is present when a row of it was kept, valid or not, and a valid row carries its
 * two flags. Pure; no I/O.
 *
 * Compact: a lower-case UUID (every id a platform lists, and nine in ten source ids) takes 17 bytes
 * in an open-addressing table of typed arrays, sized to the ids it is told to expect at a load of
 * at most 3/4 (any table size, not a power of two): about 23 bytes an id. Any other string (upper
 * case, not a UUID) goes to a plain Map. A lower-case UUID string and its 128 bits are one-to-one,
 * so lookups stay exact string equality, as the database compares ids (`uuid-words.ts`).
 *
 * Bounded: it holds at most `limit` ids ({@link SOURCE_INDEX_IDS}, about 3 MB), the first it is
 * told of; it refuses the others and is no longer `complete`. The ids it refused go to a Bloom
 * filter of bounded size ({@link PastIds}, sized by the ids `reserve` expected, 2 MB at most),
 * which tells which listed ids may have a row it does not hold: those are looked up in
 * `source_rows` (`listed-once.ts`). So a source of any size costs the same memory (1,150,000 kept
 * rows of a 10,000,000-row source took 27 MB unbounded), and the findings stay exact.
 */
import { PastIds } from "./past-ids.ts";
import { hashWords, uuidText, uuidWords, words } from "./uuid-words.ts";

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

/** A valid row with a flag true. */
const isCandidateCode = (code: number): boolean =>
  (code & VALID) !== 0 && (code & (USER | ADMIN)) !== 0;

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

/** The table's load at most: linear probing stays short (8.5 probes for an absent id, 2.5 present). */
const MAX_LOAD = 0.75;
const MIN_SLOTS = 1024;
/** Slots for `ids` ids at {@link MAX_LOAD}. */
const slotsFor = (ids: number): number => Math.max(MIN_SLOTS, Math.ceil(ids / MAX_LOAD) + 1);

/**
 * Ids a source index holds at most (about 3 MB): a source pass keeps about one row in nine, so
 * every kept id of a source of about a million rows. Past it, what the source says of an id comes
 * from `source_rows` (see `listed-once.ts`).
 */
export const SOURCE_INDEX_IDS = 131_072;
/**
 * The filter of refused ids: 16 bits for each id expected past the bound, or as many as the bound
 * when fewer were expected (about 1 "perhaps" in 1,000 ids never refused), from 8 kB to 2 MB (at
 * 2 MB, 16 bits an id for a million refused ids).
 */
const PAST_BITS_PER_ID = 16;
const PAST_BITS_MIN = 1 << 16;
const PAST_BITS_MAX = 1 << 24;

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
  readonly #limit: number;
  #refused = 0;
  #refusedCandidates = 0;
  /** The ids refused, once one is. */
  #past: PastIds | null = null;
  /** Ids expected (`reserve`), which sizes the filter of refused ones. */
  #expected = 0;

  /** `limit`: the ids it holds at most. */
  constructor(limit = SOURCE_INDEX_IDS) {
    this.#limit = Math.max(0, Math.floor(limit));
  }

  /** The ids it holds at most. */
  get limit(): number {
    return this.#limit;
  }

  /** Ids held. */
  get size(): number {
    return this.#used + this.#others.size;
  }

  /** Bytes of the typed arrays (the Map of other ids aside). */
  get tableBytes(): number {
    return this.#keys.byteLength + this.#codes.byteLength;
  }

  /** True while it holds every id it was told of: an id it does not hold was in no kept row. */
  get complete(): boolean {
    return this.#refused === 0;
  }

  /** Times it was told of an id past its bound (and did not hold it). */
  get refused(): number {
    return this.#refused;
  }

  /** Of those, valid candidates (a flag true). */
  get refusedCandidates(): number {
    return this.#refusedCandidates;
  }

  /** Bytes of the filter of refused ids (0 while none was refused). */
  get pastBytes(): number {
    return this.#past?.bytes ?? 0;
  }

  /** False when `id` was certainly never refused (and so has no kept row it does not hold). */
  mayHoldPast(id: string): boolean {
    return this.#past?.mayHold(id) ?? false;
  }

  /**
   * Makes room for `ids` ids at once (at most its bound), in one table of that size: the table
   * does not grow (and rehash everything, tens of milliseconds on the event loop at 100,000 ids,
   * and the old and new tables both held meanwhile) while a pass fills it. The ids expected past
   * the bound size the filter of those it will refuse.
   */
  reserve(ids: number): void {
    this.#expected = Math.max(this.#expected, ids);
    const slots = slotsFor(Math.min(ids, this.#limit));
    if (slots > this.#codes.length) this.#resize(slots);
  }

  /**
   * Records what the source says of `id`; a later call for the same id replaces it. False when
   * `id` is new and the index is full: it is not held.
   */
  set(id: string, state: SourceState): boolean {
    const code = encode(state);
    if (!uuidWords(id)) {
      const was = this.#others.get(id);
      if (was === undefined && this.size >= this.#limit) return this.#refuse(id, code);
      this.#others.set(id, code | ((was ?? 0) & LISTED));
      return true;
    }
    let slot = this.#find(this.#keys, this.#codes);
    const was = this.#codes[slot] as number;
    if (was === 0) {
      if (this.size >= this.#limit) return this.#refuse(id, code);
      if (this.#used + 1 > this.#codes.length * MAX_LOAD) {
        // Growing rehashes through `words`: the id is read again after it.
        this.#resize(slotsFor(Math.min(2 * this.#used, this.#limit)));
        uuidWords(id);
        slot = this.#find(this.#keys, this.#codes);
      }
      this.#keys.set(words, slot * 4);
      this.#used += 1;
    }
    this.#codes[slot] = code | (was & LISTED);
    return true;
  }

  #refuse(id: string, code: number): false {
    this.#refused += 1;
    if (isCandidateCode(code)) this.#refusedCandidates += 1;
    this.#past ??= new PastIds(
      Math.min(
        PAST_BITS_MAX,
        Math.max(
          PAST_BITS_MIN,
          PAST_BITS_PER_ID * Math.max(this.#expected - this.#limit, this.#limit),
        ),
      ),
    );
    this.#past.add(id);
    return false;
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
