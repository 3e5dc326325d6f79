/**
 * Group commit: writes that arrive while one is being written go together in the next statement.
 *
 * The executor writes twice per action (in_flight before the request, the outcome after). At 190
 * creates a second that is 380 statements, and PGlite, one thread doing one statement at a time
 * (about 3 ms each on a busy machine), could not keep up: creates waited on the journal and the
 * rate budget went unused. Batching adds no wait when the database is idle (the first write goes
 * at once, alone); when it is busy, everything that queued behind goes in one statement. Each
 * caller's promise settles when its own item is committed, so "committed before the request"
 * holds for every action exactly as before.
 */
export class GroupCommit<T> {
  readonly #write: (items: T[]) => Promise<void>;
  readonly #max: number;
  #queue: { item: T; resolve: () => void; reject: (err: unknown) => void }[] = [];
  #flushing = false;

  /** `write` commits a batch (one statement); `max` bounds a batch. */
  constructor(write: (items: T[]) => Promise<void>, max = 500) {
    this.#write = write;
    this.#max = max;
  }

  /**
   * Queues `item`; resolves once the batch holding it is committed, rejects with its error.
   *
   * @example
   *   const inFlight = new GroupCommit<number>((ids) => markManyInFlight(db, ids));
   *   await inFlight.add(action.id); // committed: now send the request
   */
  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (!this.#flushing) void this.#flush();
    });
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, this.#max);
        try {
          await this.#write(batch.map((b) => b.item));
          for (const b of batch) b.resolve();
        } catch (err) {
          for (const b of batch) b.reject(err);
        }
      }
    } finally {
      this.#flushing = false;
    }
  }
}
