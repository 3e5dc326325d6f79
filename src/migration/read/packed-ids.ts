/**
 * Listed ids kept in 16 bytes each (lower-case UUIDs; any other id as its string), in order: the
 * pages a listing reads before the source pass is complete wait in memory this way
 * (`held-pages.ts`). Pure.
 */
import { uuidText, uuidWords, words } from "./uuid-words.ts";

/**
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
