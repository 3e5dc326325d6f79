/**
 * The identities a complete listing shows bare (no active control, both legacy fields false),
 * recorded in chunks as the pages arrive (`listed_bare`, 0019): the snapshot does not keep them,
 * and a later `--since-last` run carries, instead of reading it by id, a candidate whose source
 * row changed that this listing saw bare (issue 55; `db/journal/bare-queries.ts`).
 */
import type { Kysely } from "kysely";
import { insertBare } from "../../db/journal/bare-queries.ts";
import type { Database } from "../../db/schema.ts";
import type { ListedIdentity } from "./listed-identity.ts";

/** Ids a chunk holds: a statement of about 360 kB of uuids at most. */
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
  #ids: string[] = [];
  #writes: Promise<void> = Promise.resolve();
  #failure: { err: unknown } | null = null;

  constructor(db: Kysely<Database>, runId: string) {
    this.#db = db;
    this.#runId = runId;
  }

  /** Notes the page's bare identities, writing a chunk when one is full; returns the page. */
  note(page: readonly ListedIdentity[]): readonly ListedIdentity[] {
    for (const i of page) if (isBare(i)) this.#ids.push(i.id);
    if (this.#ids.length >= CHUNK) this.#send();
    return page;
  }

  /** Writes what is noted and waits for every chunk; rethrows a chunk's failure. */
  async flush(): Promise<void> {
    this.#send();
    await this.#writes;
    if (this.#failure) throw this.#failure.err;
  }

  #send(): void {
    if (this.#ids.length === 0) return;
    const ids = this.#ids;
    this.#ids = [];
    // Chained, one statement at a time, off the listing's path; a failure waits for `flush`.
    this.#writes = this.#writes
      .then(() => (this.#failure ? undefined : insertBare(this.#db, this.#runId, ids)))
      .catch((err: unknown) => {
        this.#failure ??= { err };
      });
  }
}
