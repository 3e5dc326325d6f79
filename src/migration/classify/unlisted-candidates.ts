/**
 * Once the listing is complete, the candidates no page listed: the source index's own (it knows
 * which of the ids it holds were listed), then, past its bound, the source pass's candidates no
 * batch claimed in the database (`candidatesWindow`), in keyset windows. Each
 * batch is read by id (a filtered listing) or found absent (a bulk listing), and classified.
 */
import type { Kysely } from "kysely";
import { candidatesWindow } from "../../db/journal/claim-queries.ts";
import type { Database } from "../../db/schema.ts";
import type { IdentityReader, ReadIdentity } from "../read/listed-identity.ts";
import type { SourceIndex } from "../read/source-index.ts";
import { SourceView } from "../read/source-view.ts";
import { observeUnlisted } from "./findings-observations.ts";
import type { ListedClassifier } from "./listed-classifier.ts";

const NOT_LISTED = "absent from a complete listing of the platform's identities";

/** What the unlisted candidates' classification needs of its run. */
export interface UnlistedContext {
  readonly db: Kysely<Database>;
  readonly runId: string;
  readonly index: SourceIndex;
  /**
   * The source went past the index's bound (or claims went to the database): the candidates the
   * index does not hold are read from `source_rows`, less those claimed there.
   */
  readonly pastBound: boolean;
  readonly classifier: ListedClassifier;
}

/**
 * Classifies the candidates no page listed, `size` at a time, each read by id first (`read`):
 * absent from a listing is not proof of absence (issue 50). Without a reader (tests), an unlisted
 * candidate is not found. Returns how many were classified, how many the platform answered 404
 * for, and how many the read found (after a bulk listing: identities the listing omitted).
 */
export async function classifyUnlisted(
  ctx: UnlistedContext,
  size: number,
  read?: IdentityReader,
): Promise<{ classified: number; notFound: number; found: number }> {
  let classified = 0;
  let notFound = 0;
  let found = 0;
  for await (const { ids, sources } of unlistedBatches(ctx, size)) {
    const reads: readonly ReadIdentity[] = read
      ? await read(ids)
      : ids.map((id) => ({ status: "not_found", id, error: NOT_LISTED }));
    const unlisted = observeUnlisted(ctx.runId, reads);
    notFound += unlisted.notFound;
    found += reads.filter((r) => r.status === "found").length;
    classified += await ctx.classifier.classify(
      unlisted.observed,
      sources,
      unlisted.snapshot,
      true,
    );
  }
  return { classified, notFound, found };
}

async function* unlistedBatches(
  ctx: UnlistedContext,
  size: number,
): AsyncGenerator<{ ids: string[]; sources: SourceView }> {
  for (const ids of ctx.index.unlistedCandidates(size)) {
    yield { ids, sources: new SourceView(ctx.index) };
  }
  if (!ctx.pastBound) return;
  let after: string | null = null;
  let ids: string[] = [];
  let sources = new SourceView(ctx.index);
  for (;;) {
    const w = await candidatesWindow(ctx.db, ctx.runId, after, size);
    after = w.last;
    // The index's own candidates came above, listed or not.
    for (const c of w.unclaimed) {
      if (ctx.index.get(c.identity_id) !== undefined) continue;
      ids.push(c.identity_id);
      sources.note(c.identity_id, {
        valid: true,
        userDisabled: c.user_disabled,
        adminDisabled: c.admin_disabled,
      });
    }
    // Windows whose candidates were mostly claimed add up to one batch of `size` reads.
    while (ids.length >= size || (!w.full && ids.length > 0)) {
      // A view may say more than its batch asks: the rest of its ids go in the next batch.
      yield { ids: ids.slice(0, size), sources };
      ids = ids.slice(size);
      if (ids.length === 0) sources = new SourceView(ctx.index);
    }
    if (!w.full) return;
  }
}
