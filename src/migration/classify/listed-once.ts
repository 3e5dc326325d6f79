/**
 * Each listed identity is classified once, however often a listing serves it. A live dataset under
 * a cursor can serve an identity again: on a later page, twice within a page, where two created_at
 * windows meet, in any order. Classified twice, its page's findings collided in one statement (SQL
 * refused it) or were skipped as "already stored" (the rest of the page lost its findings).
 *
 * - within a batch, the last copy stands (the freshest the platform served in it);
 * - across batches, the first claim stands: a later copy is dropped before anything is stored;
 * - every dropped copy is counted: the report names them a platform anomaly.
 *
 * Where a claim is kept:
 * - an id the source index holds: by the index's own "listed" mark (no extra memory);
 * - an id it does not hold, while the index is complete (it holds every kept source row), that
 *   matters (a control holder, or legacy fields set): in a table as compact as the index's own
 *   (17 bytes a lower-case UUID), up to eight times the index's bound (about 24 MB at most). A
 *   reconcile whose platform held 320,000 such identities claimed each in the database when this
 *   was a Set of a quarter of the bound, a statement and a row each (bench p: 15 s of
 *   PostgreSQL's time in a 28 s run);
 * - past those bounds (a source larger than the index holds, or many holders outside it): in the
 *   database, `listed_claims` (0012), whose unique key decides, in one statement per batch that
 *   also says what `source_rows` holds of those ids (`claimListed`). Only the ids that need it are
 *   sent: those stored whatever the source says, and those the index's filter of refused ids
 *   cannot rule out (`PastIds`). Memory then stays bounded whatever the source's size, and claims
 *   stay exact.
 *
 * The claims kept in memory are made synchronously, before the batch's first await, so pages
 * classified side by side never both take one identity; the database's unique key does the same
 * for the rest.
 *
 * @example
 *   const once = new ListedOnce(index, (batch, ids, stored) => claimListed(db, runId, batch, ids, stored));
 *   const { items, sources } = await once.claim(page); // the page without identities already classified
 *   once.repeats; // copies dropped so far
 */
import type { ClaimAnswer } from "../../db/journal/claim-queries.ts";
import { SourceIndex, type SourceState } from "../read/source-index.ts";
import { SourceView, stateOfRows } from "../read/source-view.ts";
import { legacyTrue } from "../read/three-way-listing.ts";
import type { PlatformLegacy } from "./three-way.ts";

/** What the claim reads of a listed identity. */
export interface ClaimedItem {
  readonly id: string;
  readonly controls: readonly unknown[];
  readonly legacy?: PlatformLegacy;
}

/** Claims ids in the database as batch `batch` (see `claimListed`). */
export type DatabaseClaim = (
  batch: number,
  ids: readonly string[],
  stored: readonly boolean[],
) => Promise<readonly ClaimAnswer[]>;

/** The items of a batch that were not claimed before, and what the source says of them. */
export interface Claimed<T> {
  readonly items: T[];
  readonly sources: SourceView;
}

/**
 * Keeps one copy of each id in `items`, the last one served, in first-seen order. Returns the
 * items and how many copies were dropped.
 */
export function lastCopies<T extends { readonly id: string }>(
  items: readonly T[],
): { items: T[]; dropped: number } {
  // A page rarely repeats an id: one Set pass proves it, and the page is kept as it is.
  const seen = new Set<string>();
  for (const item of items) seen.add(item.id);
  if (seen.size === items.length) return { items: items as T[], dropped: 0 };
  const at = new Map<string, number>();
  const out: T[] = [];
  for (const item of items) {
    const i = at.get(item.id);
    if (i === undefined) {
      at.set(item.id, out.length);
      out.push(item);
    } else out[i] = item;
  }
  return { items: out, dropped: items.length - out.length };
}

/**
 * Ids outside the source index claimed in memory, per id of the index's bound: 1,048,576 by
 * default, about 24 MB once all are held.
 */
export const OUTSIDE_PER_INDEX_ID = 8;
/** What the table of outside claims holds for each: present, no source row. */
const CLAIMED: SourceState = Object.freeze({ valid: false });

const FRESH = 0;
const REPEAT = 1;
/** Asked of the database. */
const ASK = 2;

export class ListedOnce {
  readonly #index: SourceIndex;
  readonly #claimInDatabase: DatabaseClaim;
  /** Claimed ids the source index does not hold (control holders outside the source). */
  readonly #outside: SourceIndex;
  #batches = 0;
  #repeats = 0;
  /** Valid candidates (a flag true) claimed in the database: each is a row the index refused. */
  #pastCandidates = 0;

  /**
   * `outsideLimit`: ids outside the index claimed in memory at most (default
   * {@link OUTSIDE_PER_INDEX_ID} times its bound).
   */
  constructor(index: SourceIndex, claimInDatabase: DatabaseClaim, outsideLimit?: number) {
    this.#index = index;
    this.#claimInDatabase = claimInDatabase;
    this.#outside = new SourceIndex(outsideLimit ?? OUTSIDE_PER_INDEX_ID * index.limit);
  }

  /** Copies served again and dropped (within or across pages). */
  get repeats(): number {
    return this.#repeats;
  }

  /** Whether claims went to the database (`claimListed`): the unlisted candidates are read there too. */
  get inDatabase(): boolean {
    return this.#batches > 0;
  }

  /**
   * Valid candidates claimed in the database. Each has a row the source index refused (it holds
   * none of them), so when they are as many as the candidates it refused, every one was listed.
   */
  get claimedPastCandidates(): number {
    return this.#pastCandidates;
  }

  /** Counts copies dropped elsewhere (a page deduplicated before it was held or stored). */
  countRepeats(n: number): void {
    this.#repeats += n;
  }

  /**
   * The items not claimed before (the last copy of each), now claimed. An identity without a
   * control or legacy field set that the source does not hold is passed through unclaimed: it is
   * stored nowhere.
   */
  async claim<T extends ClaimedItem>(items: readonly T[]): Promise<Claimed<T>> {
    const { items: once, dropped } = lastCopies(items);
    this.#repeats += dropped;
    const stored = (i: T) => i.controls.length > 0 || legacyTrue(i.legacy);
    const claimed = await this.#claim(once, (i) => i.id, stored);
    this.#repeats += once.length - claimed.items.length;
    return claimed;
  }

  /** Claims ids read back from the database (a catch-up): those claimed before are left out. */
  claimIds<T extends { readonly identity_id: string }>(rows: readonly T[]): Promise<Claimed<T>> {
    return this.#claim(
      rows,
      (r) => r.identity_id,
      () => true,
    );
  }

  /** Everything up to the first await is synchronous: memory claims are taken there. */
  async #claim<T>(
    items: readonly T[],
    idOf: (item: T) => string,
    stored: (item: T) => boolean,
  ): Promise<Claimed<T>> {
    const sources = new SourceView(this.#index);
    const verdicts = items.map((item) => this.#take(idOf(item), stored(item)));
    const asked = items.filter((_, i) => verdicts[i] === ASK);
    const answers = asked.length > 0 ? await this.#ask(asked, idOf, stored) : null;
    const fresh: T[] = [];
    items.forEach((item, i) => {
      const verdict = verdicts[i];
      if (verdict === FRESH) fresh.push(item);
      if (verdict !== ASK || !answers) return;
      const id = idOf(item);
      const answer = answers.get(id);
      if (answer && !answer.claimed) return; // claimed by an earlier batch: a repeat
      const state = answer
        ? stateOfRows(answer.rows, answer.valid, answer.user_disabled, answer.admin_disabled)
        : undefined;
      if (state?.valid && (state.userDisabled || state.adminDisabled)) this.#pastCandidates += 1;
      sources.note(id, state ?? null);
      fresh.push(item);
    });
    return { items: fresh, sources };
  }

  async #ask<T>(
    asked: readonly T[],
    idOf: (item: T) => string,
    stored: (item: T) => boolean,
  ): Promise<Map<string, ClaimAnswer>> {
    this.#batches += 1;
    const answers = await this.#claimInDatabase(this.#batches, asked.map(idOf), asked.map(stored));
    return new Map(answers.map((a) => [a.identity_id, a]));
  }

  #take(id: string, stored: boolean): number {
    if (this.#outside.size > 0 && this.#outside.get(id) !== undefined) return REPEAT;
    if (this.#index.get(id) !== undefined) return this.#index.markListedOnce(id) ? FRESH : REPEAT;
    if (!this.#index.complete || this.#outside.size >= this.#outside.limit) {
      // The database is asked about an id stored whatever the source says (its claim), or one
      // that may have a kept row the index refused; for any other it would answer "no row".
      return stored || this.#index.mayHoldPast(id) ? ASK : FRESH;
    }
    if (!stored) return FRESH;
    this.#outside.set(id, CLAIMED);
    return FRESH;
  }
}
