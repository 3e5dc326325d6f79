import { PlatformError } from "./platform-error.ts";
import { SeenIds } from "./seen-ids.ts";

/**
 * Stops a cursor listing that would never end. A platform that hands out a new cursor with every
 * page but serves the same items again passes the repeated-cursor check, so two more: a page that
 * brings no item not already listed (and promises more) ends the listing, and so does reading more
 * than twice the pages the expected total needs, plus ten.
 *
 * @example
 *   const guard = new RunawayGuard("GET /v2/identity/identities", 1000, sourceRows);
 *   guard.beforePage();  // throws past the page cap
 *   guard.afterPage(items, nextCursor !== "");  // throws when nothing new came
 */
export class RunawayGuard {
  readonly #endpoint: string;
  readonly #maxPages: number;
  readonly #expected: number | undefined;
  readonly #seen = new SeenIds();
  #pages = 0;

  constructor(endpoint: string, pageSize: number, expectedTotal: number | undefined) {
    this.#endpoint = endpoint;
    this.#expected = expectedTotal;
    this.#maxPages =
      expectedTotal === undefined
        ? Number.POSITIVE_INFINITY
        : 2 * Math.ceil(Math.max(0, expectedTotal) / pageSize) + 10;
  }

  /** Call before requesting a page. */
  beforePage(): void {
    if (this.#pages < this.#maxPages) return;
    this.#fail(
      `read ${this.#pages} pages, more than twice the ${Math.ceil((this.#maxPages - 10) / 2)} that ${this.#expected} expected items need plus ten; stopping instead of listing without end. If the platform really holds far more identities than the source relation has rows, use --state per-identity.`,
    );
  }

  /** Call with the items of the page just read and whether it promised another page. */
  afterPage(items: readonly { readonly id: string }[], more: boolean): void {
    this.#pages += 1;
    let fresh = 0;
    for (const item of items) if (this.#seen.add(item.id)) fresh += 1;
    if (fresh === 0 && more) {
      this.#fail(
        `page ${this.#pages} brought no item that earlier pages had not already served, yet handed out another page cursor; stopping instead of listing the same items without end (${this.#seen.size} distinct items read).`,
      );
    }
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
