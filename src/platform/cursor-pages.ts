/**
 * A cursor listing of the platform read page by page, with the guards every listing needs: a
 * cursor seen twice stops it (it would loop forever), a runaway listing stops it
 * (`RunawayGuard`), and an item served twice within a page is kept once, counted and logged.
 */
import type { Logger } from "../log.ts";
import { escapeInvisible } from "../visible-text.ts";
import type { MetricsRecorder } from "./client-metrics.ts";
import { PlatformError } from "./platform-error.ts";
import type { RunawayGuard } from "./runaway-guard.ts";

/** One page as a wire parser reads it. */
export interface CursorPage<T> {
  readonly items: T[];
  readonly nextPageCursor: string;
}

/** Where a listing's anomalies are counted and told. */
export interface ListingWatch {
  readonly endpoint: string;
  /** What an item is, for the log line: "identity", "control". */
  readonly what: string;
  readonly metrics: MetricsRecorder;
  readonly logger: Logger;
}

/**
 * Pages of a listing, each read with the cursor the one before it returned ("" first).
 *
 * @example
 *   for await (const items of cursorPages((c) => readPage(c), guard, watch)) store(items);
 */
export async function* cursorPages<T extends { id: string }>(
  read: (cursor: string) => Promise<CursorPage<T>>,
  guard: RunawayGuard,
  watch: ListingWatch,
): AsyncGenerator<T[]> {
  const seen = new Set<string>();
  let cursor = "";
  do {
    guard.beforePage();
    const page = await read(cursor);
    const items = dropRepeats(page.items, watch);
    cursor = loopGuard(seen, page.nextPageCursor, watch.endpoint);
    guard.afterPage(items, cursor !== "");
    yield items;
  } while (cursor !== "");
}

/**
 * One copy of each item of a page. A platform that serves an item twice in one page would make
 * the snapshot insert fail on its own conflict; the repeat is counted and logged instead.
 */
function dropRepeats<T extends { id: string }>(items: T[], watch: ListingWatch): T[] {
  const ids = new Set<string>();
  const kept: T[] = [];
  let first: string | undefined;
  for (const item of items) {
    if (ids.has(item.id)) first ??= item.id;
    else {
      ids.add(item.id);
      kept.push(item);
    }
  }
  const dropped = items.length - kept.length;
  if (dropped > 0) {
    watch.metrics.endpoint(watch.endpoint).anomalies += dropped;
    watch.logger.warn(
      `Platform anomaly: ${watch.endpoint} served ${dropped} ${watch.what} record(s) twice within one page (first: "${escapeInvisible(first ?? "")}"); kept one copy of each.`,
    );
  }
  return kept;
}

/** A cursor seen twice would loop forever; the platform promised opaque, advancing cursors. */
function loopGuard(seen: Set<string>, cursor: string, endpoint: string): string {
  if (cursor === "") return "";
  if (seen.has(cursor)) {
    throw new PlatformError({
      kind: "protocol",
      classification: "fatal",
      endpoint,
      detail: "next_page_cursor repeats an earlier cursor; stopping instead of looping forever",
    });
  }
  seen.add(cursor);
  return cursor;
}
