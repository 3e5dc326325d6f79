const DEFAULT_SLOTS = 1024;

/**
 * Remembers ids in 4 bytes each: a 32-bit hash in an open-addressing table (a Set of strings
 * holds about 90 bytes an id). Collisions make `add` answer "seen" for a few new ids (about one in
 * 4,000 at a million), so it serves only to notice a page that brings nothing new, never to drop an
 * item.
 *
 * @example
 *   const seen = new SeenIds();
 *   seen.add("a"); // true: new
 *   seen.add("a"); // false: served before
 */
export class SeenIds {
  readonly #initial: number;
  #slots: Uint32Array;
  #size = 0;

  /** `slots`: the table's first size, a power of two (it grows as ids come). */
  constructor(slots = DEFAULT_SLOTS) {
    this.#initial = slots;
    this.#slots = new Uint32Array(slots);
  }

  get size(): number {
    return this.#size;
  }

  /** Adds the id; false when it (or an id with the same hash) was added before. */
  add(id: string): boolean {
    if ((this.#size + 1) * 2 > this.#slots.length) this.#grow();
    const inserted = insert(this.#slots, hash(id));
    if (inserted) this.#size += 1;
    return inserted;
  }

  /** Forgets every id, and gives back what the table grew to. */
  clear(): void {
    if (this.#size === 0) return;
    if (this.#slots.length > this.#initial) this.#slots = new Uint32Array(this.#initial);
    else this.#slots.fill(0);
    this.#size = 0;
  }

  #grow(): void {
    const old = this.#slots;
    this.#slots = new Uint32Array(old.length * 2);
    for (const h of old) if (h !== 0) insert(this.#slots, h);
  }
}

/** FNV-1a over UTF-16 code units; 0 marks an empty slot, so it is never a hash. */
function hash(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0 || 1;
}

function insert(slots: Uint32Array, h: number): boolean {
  const mask = slots.length - 1;
  for (let i = h & mask; ; i = (i + 1) & mask) {
    const at = slots[i];
    if (at === 0) {
      slots[i] = h;
      return true;
    }
    if (at === h) return false;
  }
}
