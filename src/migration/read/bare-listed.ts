/**
 * The identities a complete listing shows bare (no active control, both legacy fields false),
 * recorded in chunks as the pages arrive (`listed_bare`, 0019): the snapshot does not keep them,
 * and a later `--since-last` run carries, instead of reading it by id, a candidate whose source
 * row changed that this listing saw bare and nothing observed or wrote to since (issue 55). UUIDs
 * are packed 16 bytes each: a million ids are 16 MB and a few statements.
 */
import type { Kysely } from "kysely";
import {
  type BareChunk,
  bareChunks,
  insertBareChunk,
  unobservedSince,
} from "../../db/journal/bare-queries.ts";
import type { Database } from "../../db/schema.ts";
import type { ListedIdentity } from "./listed-identity.ts";
import { uuidWords, words } from "./uuid-words.ts";

/** Ids a chunk holds: 320 kB of UUIDs. */
const CHUNK = 20_000;

/** Listed with no control and both legacy fields false (absent: both false). */
const isBare = (i: ListedIdentity) =>
  i.controls.length === 0 &&
  (i.legacy === undefined || (i.legacy.userDisabled === false && i.legacy.adminDisabled === false));

/**
 * @example
 *   const bare = new BareListed(db, runId);
 *   await listPlatform(ctx, "bulk", hint, (page) => stream.page(bare.note(page)));
 *   await bare.flush();
 */
export class BareListed {
  readonly #db: Kysely<Database>;
  readonly #runId: string;
  #uuids = new DataView(new ArrayBuffer(CHUNK * 16));
  #count = 0;
  #others: string[] = [];
  #chunks = 0;
  #writes: Promise<void> = Promise.resolve();
  #failure: { err: unknown } | null = null;

  constructor(db: Kysely<Database>, runId: string) {
    this.#db = db;
    this.#runId = runId;
  }

  /** Notes the page's bare identities, writing a chunk when one is full; returns the page. */
  note(page: readonly ListedIdentity[]): readonly ListedIdentity[] {
    for (const i of page) {
      if (!isBare(i)) continue;
      if (uuidWords(i.id)) {
        for (let w = 0; w < 4; w++) this.#uuids.setUint32(this.#count * 16 + w * 4, words[w] ?? 0);
        this.#count += 1;
      } else {
        this.#others.push(i.id);
      }
      if (this.#count + this.#others.length >= CHUNK) this.#send();
    }
    return page;
  }

  /** Writes what is noted and waits for every chunk; rethrows a chunk's failure. */
  async flush(): Promise<void> {
    this.#send();
    await this.#writes;
    if (this.#failure) throw this.#failure.err;
  }

  #send(): void {
    if (this.#count + this.#others.length === 0) return;
    const chunk: BareChunk = {
      uuids: new Uint8Array(this.#uuids.buffer, 0, this.#count * 16),
      others: this.#others,
    };
    const n = this.#chunks++;
    this.#uuids = new DataView(new ArrayBuffer(CHUNK * 16));
    this.#count = 0;
    this.#others = [];
    // Chained, one statement at a time, off the listing's path; a failure waits for `flush`.
    this.#writes = this.#writes
      .then(() => (this.#failure ? undefined : insertBareChunk(this.#db, this.#runId, n, chunk)))
      .catch((err: unknown) => {
        this.#failure ??= { err };
      });
  }
}

/**
 * Of `ids`, those run `completeId` listed bare that no run since it observed otherwise or wrote to
 * (`unobservedSince`): still bare, as far as the platform's `updated_at` tells (the caller leaves
 * out those it listed as changed). Reads the chunks once.
 *
 * @example
 *   const bare = await stillBare(db, runId, completeId, changedCandidates);
 */
export async function stillBare(
  db: Kysely<Database>,
  runId: string,
  completeId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  // The asked UUIDs by their first word; the rest by text.
  const asked = new Map<number, { rest: [number, number, number]; id: string }[]>();
  const others = new Set<string>();
  for (const id of ids) {
    if (!uuidWords(id)) {
      others.add(id);
      continue;
    }
    const [w0, w1, w2, w3] = [words[0] ?? 0, words[1] ?? 0, words[2] ?? 0, words[3] ?? 0];
    asked.set(w0, [...(asked.get(w0) ?? []), { rest: [w1, w2, w3], id }]);
  }
  const found: string[] = [];
  for await (const c of bareChunks(db, completeId)) {
    const view = new DataView(c.uuids.buffer, c.uuids.byteOffset, c.uuids.byteLength);
    for (let at = 0; at + 16 <= view.byteLength; at += 16) {
      const same = asked.get(view.getUint32(at));
      if (!same) continue;
      for (const s of same) {
        const [w1, w2, w3] = s.rest;
        const rest = [view.getUint32(at + 4), view.getUint32(at + 8), view.getUint32(at + 12)];
        if (rest[0] === w1 && rest[1] === w2 && rest[2] === w3) found.push(s.id);
      }
    }
    for (const o of c.others) if (others.has(o)) found.push(o);
  }
  return unobservedSince(db, runId, completeId, [...new Set(found)]);
}
