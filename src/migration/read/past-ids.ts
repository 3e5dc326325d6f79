/**
 * The ids a bounded source index was told of and did not hold, as a Bloom filter of fixed size: it
 * answers "certainly not told" or "perhaps told". It decides only which ids a page asks
 * `source_rows` about, never what is classified: a "perhaps" for an id never told is answered by
 * the database (no row), and an id told is never answered "certainly not". So the findings stay
 * exact at any fill; a filter filled past its size only asks the database about more ids. Pure.
 *
 * Size: 16 bits an id at first and 6 probes, so at its planned fill about 1 "perhaps" in 1,000
 * for an id never told.
 *
 * @example
 *   const past = new PastIds(1 << 20);
 *   past.add("6a591c0c-3e0f-4494-8559-5dc864060d39");
 *   past.mayHold("6a591c0c-3e0f-4494-8559-5dc864060d39"); // true
 */
import { fmix32, hashWords, uuidWords, words } from "./uuid-words.ts";

const PROBES = 6;

export class PastIds {
  readonly #bits: Uint32Array;
  readonly #size: number;
  #added = 0;

  /** `bits`: the filter's size in bits (rounded up to a multiple of 32). */
  constructor(bits: number) {
    this.#bits = new Uint32Array(Math.max(1, Math.ceil(bits / 32)));
    this.#size = this.#bits.length * 32;
  }

  /** Ids added (a repeated id counts again). */
  get added(): number {
    return this.#added;
  }

  get bytes(): number {
    return this.#bits.byteLength;
  }

  add(id: string): void {
    this.#added += 1;
    const [h1, h2] = hashes(id);
    for (let i = 0; i < PROBES; i++) {
      const bit = (h1 + i * h2) % this.#size;
      this.#bits[bit >>> 5] = (this.#bits[bit >>> 5] as number) | (1 << (bit & 31));
    }
  }

  /** False when `id` was certainly never added. */
  mayHold(id: string): boolean {
    const [h1, h2] = hashes(id);
    for (let i = 0; i < PROBES; i++) {
      const bit = (h1 + i * h2) % this.#size;
      if (((this.#bits[bit >>> 5] as number) & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }
}

const pair: [number, number] = [0, 0];

/** Two independent 32-bit hashes of an id (the second odd, so the probes never repeat early). */
function hashes(id: string): [number, number] {
  if (uuidWords(id)) {
    pair[0] = hashWords();
    const w = words as unknown as [number, number, number, number];
    const other = Math.imul(w[0], 0xc2b2ae35) ^ w[1] ^ Math.imul(w[2], 0x9e3779b1) ^ w[3];
    pair[1] = (fmix32(Math.imul(other ^ 0x5bd1e995, 0x85ebca6b)) | 1) >>> 0;
    return pair;
  }
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
  }
  pair[0] = fmix32(a);
  pair[1] = (fmix32(b) | 1) >>> 0;
  return pair;
}
