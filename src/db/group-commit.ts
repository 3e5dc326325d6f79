/**
 * Group commit: the writes that arrive while one statement runs wait for it, then go together in
 * the next one. A write that finds nothing running is sent at once, so grouping adds no wait; it
 * only takes the place of a queue the database would hold anyway (PGlite runs one statement at a
 * time, and each statement costs its parse, plan and commit whatever it holds).
 *
 * Each caller's promise settles when the statement that holds its write has committed (or failed),
 * so a caller that goes on after its write still goes on after its commit. What a statement holds
 * is the caller's choice (`take`): the journal's writes keep one action's writes in order, and the
 * classified batches bound their findings.
 *
 * @example
 *   const commit = new GroupCommit<Row, void>({
 *     take: (queue) => Math.min(queue.length, 500),
 *     run: async (rows) => { await insertAll(rows); return rows.map(() => undefined); },
 *   });
 *   await Promise.all(rows.map((r) => commit.submit(r))); // fewer statements than rows
 */

/** What a group commit does with its queue. */
export interface GroupPolicy<T, R> {
  /**
   * Which queued writes the next statement holds: the first `n` (a number), or the positions
   * given, ascending. Either way the queue's first write is one of them, or the queue never
   * drains; the others stay queued in their order.
   */
  readonly take: (queue: readonly T[]) => number | readonly number[];
  /** Runs one statement for `writes`; resolves with one result per write, in their order. */
  readonly run: (writes: readonly T[]) => Promise<readonly R[]>;
}

interface Waiting<T, R> {
  readonly write: T;
  readonly resolve: (r: R) => void;
  readonly reject: (err: unknown) => void;
}

export class GroupCommit<T, R> {
  readonly #policy: GroupPolicy<T, R>;
  #queue: Waiting<T, R>[] = [];
  #running = false;
  /** Statements sent, and writes they held (for debug logs). */
  statements = 0;
  writes = 0;

  constructor(policy: GroupPolicy<T, R>) {
    this.#policy = policy;
  }

  /** Queues `write`; settles once the statement that holds it has committed or failed. */
  submit(write: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ write, resolve, reject });
      if (!this.#running) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#running = true;
    try {
      while (this.#queue.length > 0) {
        let group: Waiting<T, R>[];
        try {
          group = this.#take();
        } catch (err) {
          // A policy that cannot choose would leave every write waiting: they all fail instead.
          for (const w of this.#queue.splice(0)) w.reject(err);
          continue;
        }
        this.statements += 1;
        this.writes += group.length;
        try {
          const results = await this.#policy.run(group.map((w) => w.write));
          for (const [i, w] of group.entries()) w.resolve(results[i] as R);
        } catch (err) {
          for (const w of group) w.reject(err);
        }
      }
    } finally {
      this.#running = false;
    }
  }

  #take(): Waiting<T, R>[] {
    const chosen = this.#policy.take(this.#queue.map((w) => w.write));
    if (typeof chosen === "number") {
      return this.#queue.splice(0, Math.max(1, chosen));
    }
    if (chosen[0] !== 0)
      throw new Error("group commit: a statement must hold the queue's first write");
    const taken = new Set(chosen);
    const group = this.#queue.filter((_, i) => taken.has(i));
    this.#queue = this.#queue.filter((_, i) => !taken.has(i));
    return group;
  }
}
