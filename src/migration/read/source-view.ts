/**
 * What the source says of the identities of one batch (a listing page, a caught-up range, the
 * unlisted candidates): the run's {@link SourceIndex}, and, for ids past its bound, what
 * `source_rows` answered for this batch. Pure; no I/O.
 */
import type { SourceIndex, SourceState } from "./source-index.ts";

/**
 * @example
 *   const sources = new SourceView(index);
 *   sources.note(id, null); // source_rows holds no row of it
 *   sources.get(id); // undefined
 */
export class SourceView {
  readonly #index: SourceIndex;
  /** What the database said of ids the index does not hold (null: no row of them). */
  readonly #past = new Map<string, SourceState | null>();

  constructor(index: SourceIndex) {
    this.#index = index;
  }

  /** What the source says of `id`, or undefined when no row of it was kept. */
  get(id: string): SourceState | undefined {
    const past = this.#past.get(id);
    if (past !== undefined) return past ?? undefined;
    return this.#index.get(id);
  }

  /** What `source_rows` says of an id the index does not hold (null: no row of it). */
  note(id: string, state: SourceState | null): void {
    this.#past.set(id, state);
  }

  /** A row looked up by id: the index holds it while it has room, else this batch does. */
  set(id: string, state: SourceState): void {
    if (!this.#index.set(id, state)) this.#past.set(id, state);
  }
}

/** What an id's source rows say: its flags when its one row is valid; else invalid; none: undefined. */
export function stateOfRows(
  rows: number,
  valid: boolean | null,
  userDisabled: boolean | null,
  adminDisabled: boolean | null,
): SourceState | undefined {
  if (rows === 0) return undefined;
  return rows === 1 && valid === true && userDisabled !== null && adminDisabled !== null
    ? { valid: true, userDisabled, adminDisabled }
    : { valid: false };
}
