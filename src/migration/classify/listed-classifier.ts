/**
 * The findings stream's classification: identities observed in a listed page (or read by id,
 * or caught up from the database) classified from what the source says of them (the source index,
 * and `source_rows` past its bound: a {@link SourceView}) and stored with their findings, each
 * identity once. `findings-stream.ts` decides when; this is how.
 */
import type { StoredObservation } from "../../db/journal/finding-queries.ts";
import type { ListedIdentity } from "../read/listed-identity.ts";
import { outsideSourceLookup } from "../read/outside-source-lookup.ts";
import type { SourceIndex } from "../read/source-index.ts";
import type { SourceView } from "../read/source-view.ts";
import { platformMarks } from "../read/three-way-listing.ts";
import { type FindingsOptions, type SnapshotRows, storeFindings } from "./findings.ts";
import { holdsSellOnly, isCandidate, observeListed, stateRow } from "./findings-observations.ts";
import type { FindingsStreamContext } from "./findings-stream-types.ts";
import { type ClassifiedWriter, GroupedWrites, writeClassified } from "./grouped-writes.ts";
import type { ListedOnce } from "./listed-once.ts";

/**
 * @example
 *   const classifier = new ListedClassifier(ctx, { journalCreates: false, journalDeletes: false }, index, once);
 *   await classifier.page(identities); // the page's findings, stored with its snapshot rows
 */
export class ListedClassifier {
  /** Actions journaled with the findings so far. */
  actions = 0;
  readonly #ctx: FindingsStreamContext;
  readonly #options: Omit<FindingsOptions, "unlistedHoldNoSellOnly">;
  readonly #index: SourceIndex;
  readonly #once: ListedOnce;
  readonly #lookUpOutside: ReturnType<typeof outsideSourceLookup>;
  /** Grouped where the database runs one statement at a time (`ctx.serialDatabase`). */
  readonly grouped: GroupedWrites | undefined;
  readonly #write: ClassifiedWriter;

  constructor(
    ctx: FindingsStreamContext,
    options: Omit<FindingsOptions, "unlistedHoldNoSellOnly">,
    index: SourceIndex,
    once: ListedOnce,
  ) {
    this.#ctx = ctx;
    this.#options = options;
    this.#index = index;
    this.#once = once;
    this.#lookUpOutside = outsideSourceLookup(ctx.db, ctx.source, ctx.runId);
    this.grouped = ctx.serialDatabase ? new GroupedWrites(ctx.db) : undefined;
    this.#write = this.grouped?.write ?? writeClassified(ctx.db);
  }

  /**
   * A listed page: the page and the source say everything (the source index, or one statement
   * past its bound); one statement stores both.
   */
  async page(page: readonly ListedIdentity[]): Promise<number> {
    // Claimed before any await: pages classified side by side never both take an identity.
    const { items, sources } = await this.#once.claim(page);
    const { observed, snapshot } = observeListed(this.#ctx.runId, items, sources);
    return this.classify(observed, sources, snapshot);
  }

  /** Classifies observed identities (candidates and SELL_ONLY holders) and stores the findings. */
  async classify(
    observed: readonly StoredObservation[],
    sources: SourceView,
    snapshot?: SnapshotRows,
    unlisted = false,
  ): Promise<number> {
    const index = this.#index;
    await this.#lookUpOutside(observed, sources);
    // What is classified here was listed (or is the unlisted rest): the rest is told apart by it.
    if (!unlisted) for (const o of observed) index.markListed(o.identity_id);
    // Unlisted ones come from the index's own candidates.
    const rows = observed
      .filter(
        (o) =>
          unlisted ||
          holdsSellOnly(o.controls) ||
          isCandidate(sources.get(o.identity_id)) ||
          (platformMarks(o) && sources.get(o.identity_id)?.valid === true),
      )
      .map(({ identity_id, ...o }) => stateRow(identity_id, sources.get(identity_id), o));
    const { db, runId } = this.#ctx;
    // Read after the await: pages are classified side by side, so `+= await` would lose counts.
    const actions = await storeFindings(db, runId, rows, this.#options, snapshot, this.#write);
    this.actions += actions;
    return rows.length;
  }
}
