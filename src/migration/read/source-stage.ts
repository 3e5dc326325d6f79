import type { Kysely } from "kysely";
import type { SourceConfig } from "../../config.ts";
import {
  analyzeRunTables,
  insertSourceRows,
  maxLookupSeq,
} from "../../db/journal/snapshot-queries.ts";
import type { Database, NewSourceRow } from "../../db/schema.ts";
import { type ClassifiedRow, lookupSourceRows, readSource } from "../../db/source/source-reader.ts";
import type { Progress } from "../steer/progress.ts";
import type { SourceIndex, SourceState } from "./source-index.ts";

export interface SourceCounts {
  rowsRead: number;
  /** Valid rows with a flag true. */
  candidates: number;
  /** Rows the reader classified as anomalies (warnings included). */
  anomalies: number;
}

/** A classified row as `source_rows` stores it. */
export function sourceRecord(runId: string, seq: number, row: ClassifiedRow): NewSourceRow {
  return {
    run_id: runId,
    seq,
    identity_id: row.identityId,
    user_disabled: row.userDisabled,
    admin_disabled: row.adminDisabled,
    anomaly: row.anomaly,
    anomaly_detail: row.anomalyDetail,
    valid: row.valid,
  };
}

/**
 * What the rows kept of one id say of it: its flags when its one row is valid; invalid when that
 * row is not, or when several rows hold the id.
 *
 * @example
 *   index.set(id, sourceStateOf(rowsOfId));
 */
export function sourceStateOf(rows: readonly ClassifiedRow[]): SourceState {
  const row = rows.length === 1 ? rows[0] : undefined;
  return row?.valid && row.userDisabled !== null && row.adminDisabled !== null
    ? { valid: true, userDisabled: row.userDisabled, adminDisabled: row.adminDisabled }
    : { valid: false };
}

/**
 * Streams the user's relation and keeps what matters for this run — valid rows with a flag true,
 * and every anomaly — in `source_rows` (and, given an `index`, what they say of each id, for the
 * findings of a listing). Clean, unflagged rows are only counted; a platform identity that later
 * needs them is looked up by id (`addLookedUpRows`).
 */
export async function loadSource(
  db: Kysely<Database>,
  source: SourceConfig,
  runId: string,
  progress: Progress,
  signal?: AbortSignal,
  index?: SourceIndex,
): Promise<SourceCounts> {
  const counts: SourceCounts = { rowsRead: 0, candidates: 0, anomalies: 0 };
  progress.start("source", null);
  for await (const batch of readSource(db, source, { signal, omitClean: true })) {
    const keep: NewSourceRow[] = [];
    counts.rowsRead += batch.rowsRead;
    for (const row of batch.rows) {
      const flagged = row.valid && (row.userDisabled === true || row.adminDisabled === true);
      if (row.anomaly) counts.anomalies += 1;
      if (flagged) counts.candidates += 1;
      if (!flagged && !row.anomaly) continue;
      keep.push(sourceRecord(runId, row.seq, row));
      // A duplicated id's rows are all invalid (duplicate_id), so one row says it all.
      if (row.identityId !== null) index?.set(row.identityId, sourceStateOf([row]));
    }
    await insertSourceRows(db, keep);
    progress.tick(batch.rowsRead);
  }
  progress.stop();
  await analyzeRunTables(db, "source");
  return counts;
}

/**
 * Adds the source rows of specific identities (platform identities with a SELL_ONLY, identities the
 * tool acted on earlier) that the first pass did not keep. They get negative `seq` numbers. An id
 * with no row stays absent, which later reads as "unknown to the source".
 */
export async function addLookedUpRows(
  db: Kysely<Database>,
  source: SourceConfig,
  runId: string,
  ids: string[],
): Promise<number> {
  if (ids.length === 0) return 0;
  let seq = await maxLookupSeq(db, runId);
  const found = await lookupSourceRows(db, source, ids);
  // Two rows for one id are already classified duplicate_id (invalid) by the lookup.
  const rows = [...found.values()].flat();
  const keep: NewSourceRow[] = rows.map((row) => {
    seq -= 1;
    return sourceRecord(runId, seq, row);
  });
  await insertSourceRows(db, keep);
  return keep.length;
}
