import { PlatformError } from "./platform-error.ts";
import { SeenIds } from "./seen-ids.ts";

/** What the guard reads of a listed item. */
export interface GuardedItem {
  readonly id: string;
  readonly createdAt?: string | null;
}

/**
 * Stops a cursor listing that would never end. A platform that hands out a new cursor with every
 * page but serves the same items again passes the repeated-cursor check, so two more: a page that
 * brings no item not already served (and promises more) ends the listing, and so does reading
 * more than twice the pages the expected total needs, plus ten.
 *
 * What "already served" costs depends on the listing. One in `created_at` order (the identities
 * listing, ASC or DESC) advances: an item is new when it lies beyond the point earlier pages
 * reached, or on that very millisecond with an id not served there yet. So only the ids of one
 * millisecond are remembered, not every id listed (4 to 16 bytes each: 8 to 16 MB at a million
 * identities, growing with the listing). An item behind that point is not new: it was served
 * already, or the platform broke the order the listing asked for. Items without a readable
 * `created_at`, and listings in no order, are remembered by id.
 *
 * @example
 *   const guard = new RunawayGuard("GET /v2/identity/identities", 1000, sourceRows, "ASC");
 *   guard.beforePage();  // throws past the page cap
 *   guard.afterPage(items, nextCursor !== "");  // throws when nothing new came
 */
export class RunawayGuard {
  readonly #endpoint: string;
  readonly #maxPages: number;
  readonly #expected: number | undefined;
  readonly #order: "ASC" | "DESC" | undefined;
  /** Ids remembered one by one: every id in no order; else those without a created_at. */
  readonly #seen = new SeenIds();
  /**
   * How far the ordered listing reached (epoch ms), and the ids served on that millisecond: a
   * small table, emptied at each new millisecond (usually every item).
   */
  #frontier = Number.NaN;
  readonly #edge = new SeenIds(16);
  #pages = 0;
  #served = 0;

  constructor(
    endpoint: string,
    pageSize: number,
    expectedTotal: number | undefined,
    order?: "ASC" | "DESC",
  ) {
    this.#endpoint = endpoint;
    this.#expected = expectedTotal;
    this.#order = order;
    this.#maxPages =
      expectedTotal === undefined
        ? Number.POSITIVE_INFINITY
        : 2 * Math.ceil(Math.max(0, expectedTotal) / pageSize) + 10;
  }

  /** Ids held to tell new items from served ones (the ordered listing's are one millisecond's). */
  get remembered(): number {
    return this.#seen.size + this.#edge.size;
  }

  /** Call before requesting a page. */
  beforePage(): void {
    if (this.#pages < this.#maxPages) return;
    this.#fail(
      `read ${this.#pages} pages, more than twice the ${Math.ceil((this.#maxPages - 10) / 2)} that ${this.#expected} expected items need plus ten; stopping instead of listing without end. If the platform really holds far more identities than the source relation has rows, use --state per-identity.`,
    );
  }

  /** Call with the items of the page just read and whether it promised another page. */
  afterPage(items: readonly GuardedItem[], more: boolean): void {
    this.#pages += 1;
    let fresh = 0;
    for (const item of items) if (this.#isNew(item)) fresh += 1;
    this.#served += fresh;
    if (fresh === 0 && more) {
      const reached =
        this.#order && Number.isFinite(this.#frontier)
          ? `, none past created_at ${new Date(this.#frontier).toISOString()} in ${this.#order} order`
          : "";
      this.#fail(
        `page ${this.#pages} brought no item that earlier pages had not already served${reached}, yet handed out another page cursor; stopping instead of listing the same items without end (${this.#served} distinct items read).`,
      );
    }
  }

  #isNew(item: GuardedItem): boolean {
    const t = this.#order && item.createdAt ? Math.floor(Date.parse(item.createdAt)) : Number.NaN;
    if (Number.isNaN(t)) return this.#seen.add(item.id);
    const ahead = Number.isNaN(this.#frontier)
      ? 1
      : this.#order === "ASC"
        ? t - this.#frontier
        : this.#frontier - t;
    if (ahead < 0) return false;
    if (ahead > 0) {
      this.#frontier = t;
      this.#edge.clear();
    }
    return this.#edge.add(item.id);
  }

  #fail(detail: string): never {
    throw new PlatformError({
      kind: "protocol",
      classification: "fatal",
      endpoint: this.#endpoint,
      detail,
    });
  }
}
