/**
 * The source rows of identities the source pass did not keep (it keeps a row with a flag true)
 * that the listing shows holding a SELL_ONLY or marked by the platform's legacy fields: looked up
 * by id before they are classified, so that `unknown_to_source` keeps its meaning.
 */
import type { Kysely } from "kysely";
import type { SourceConfig } from "../../config.ts";
import type { StoredObservation } from "../../db/journal/finding-queries.ts";
import { insertSourceRows, maxLookupSeq } from "../../db/journal/snapshot-queries.ts";
import type { Database } from "../../db/schema.ts";
import { lookupSourceRows } from "../../db/source/source-reader.ts";
import { holdsSellOnly } from "../classify/findings-observations.ts";
import { sourceRecord, sourceStateOf } from "./source-stage.ts";
import type { SourceView } from "./source-view.ts";
import { platformMarks } from "./three-way-listing.ts";

/**
 * Looks up, by id, the source rows of SELL_ONLY holders the source pass did not keep, stores
 * them (negative `seq`, allocated here so that concurrent pages never share one) and tells the
 * batch's view of the source (the index, while it has room).
 */
export function outsideSourceLookup(
  db: Kysely<Database>,
  source: SourceConfig,
  runId: string,
): (observed: readonly StoredObservation[], sources: SourceView) => Promise<void> {
  let lookupBase: Promise<number> | null = null;
  let lookupSeq = 0;
  return async function lookUpOutside(
    observed: readonly StoredObservation[],
    sources: SourceView,
  ): Promise<void> {
    const outside = observed
      .filter(
        (o) =>
          (holdsSellOnly(o.controls) || platformMarks(o)) &&
          sources.get(o.identity_id) === undefined,
      )
      .map((o) => o.identity_id);
    if (outside.length === 0) return;
    lookupBase ??= maxLookupSeq(db, runId);
    const base = await lookupBase;
    const found = await lookupSourceRows(db, source, outside);
    const keep = [];
    for (const [id, rows] of found) {
      for (const row of rows) keep.push(sourceRecord(runId, base - ++lookupSeq, row));
      sources.set(id, sourceStateOf(rows));
    }
    await insertSourceRows(db, keep);
  };
}
