/**
 * Re-read the source before a send (issue 26, step 3). A pending create was decided on the source's
 * flags as a plan, or an interrupted run, read them. Before it is sent (on `--resume`, on
 * `apply --plan`), the flag behind it is read again from the source relation:
 *
 * - a `user_disabled` no longer true (the row cleared, gone, or no longer valid) cancels the create:
 *   `skipped:source_changed`, with the reason in its error column; nothing is sent;
 * - flags set in the source that the run saw clear (the plan, for `apply --plan`) are counted, left
 *   for the next run, and reported (a warning, and a `source_reread` event in summary.json).
 *
 * How the source is read, by the one rule below (cheapest in rows the database touches):
 * - `by-ids`: the pending identities, 500 a statement, through the id column (an index probe costs
 *   about ten rows read in order), when they are at most a tenth of the source's rows;
 * - `pass`: one pass over the rows that may matter (the reader's `omitClean` pass), when they are
 *   more; the ids of the pending creates still flagged are kept in memory meanwhile.
 */
import type { SourceConfig } from "../../config.ts";
import { updateAction } from "../../db/journal/journal-queries.ts";
import { decidedPendingWithFlags, type StaleAction } from "../../db/journal/reverify-queries.ts";
import { currentRequester, recordRunEvent } from "../../db/journal/run-control-queries.ts";
import { getRun } from "../../db/journal/run-queries.ts";
import { type ClassifiedRow, lookupSourceRows, readSource } from "../../db/source/source-reader.ts";
import { countNewlyFlagged } from "../../db/source/source-recheck-queries.ts";
import type { ReverifyContext } from "./reverify-context.ts";

/** The outcome of a pending create whose source flag was cleared before it was sent. */
export const SOURCE_CHANGED = "source_changed";

export type SourceRereadStrategy = "by-ids" | "pass";

/** What the re-read of the source found. */
export interface SourceRecheck {
  readonly strategy: SourceRereadStrategy;
  /** Pending creates cancelled: their flag is no longer set. */
  readonly sourceChanged: number;
  /** Flags set now that the run saw clear: left for the next run. */
  readonly newlyFlagged: number;
}

const PAGE = 500;
/** An index probe costs about this many rows read in order. */
const PROBE_ROWS = 10;

/**
 * How to re-read the source for `pending` identities of a source of `sourceRows` rows (0: unknown).
 *
 * @example
 *   chooseSourceReread(100, 5000) // "by-ids"
 *   chooseSourceReread(4000, 5000) // "pass"
 */
export function chooseSourceReread(pending: number, sourceRows: number): SourceRereadStrategy {
  return sourceRows > 0 && pending * PROBE_ROWS > sourceRows ? "pass" : "by-ids";
}

/**
 * Re-reads the source flags of the pending creates of `runId` decided before `since` (by an
 * earlier process, whatever brought them back to pending: an in-doubt create verified absent
 * included), cancels
 * those whose flag was cleared, and counts the flags newly set. Call it before the platform's
 * re-read, which then skips what it cancelled.
 *
 * @example
 *   const r = await recheckSource(ctx, source, runId, since, 400, 5000);
 *   // r.sourceChanged: creates not sent because user_disabled was cleared meanwhile
 */
export async function recheckSource(
  ctx: ReverifyContext,
  source: SourceConfig,
  runId: string,
  since: Date,
  pendingIdentities: number,
  sourceRows: number,
): Promise<SourceRecheck> {
  const strategy = chooseSourceReread(pendingIdentities, sourceRows);
  const still =
    strategy === "pass"
      ? await stillFlaggedByPass(ctx, source, runId, since)
      : await stillFlaggedByIds(ctx, source, runId, since);
  let sourceChanged = 0;
  for (let after = 0; ; ) {
    const page = await decidedPendingWithFlags(ctx.db, runId, since, after, PAGE);
    if (page.length === 0) break;
    after = page[page.length - 1]?.id ?? after;
    for (const a of page) {
      if (a.action !== "create" || still.kept.has(a.id)) continue;
      await cancel(ctx, a, still.why.get(a.id) ?? "user_disabled is no longer true in the source");
      sourceChanged += 1;
    }
  }
  const fresh = await countNewlyFlagged(ctx.db, source, await fullReadOf(ctx, runId));
  const newlyFlagged = fresh.userDisabled + fresh.adminDisabled;
  await report(ctx, runId, strategy, sourceChanged, fresh);
  return { strategy, sourceChanged, newlyFlagged };
}

/**
 * The run whose findings cover every flagged source row: the plan of an `apply --plan` (whose own
 * findings are the plan's creates only), else the run itself.
 */
async function fullReadOf(ctx: ReverifyContext, runId: string): Promise<string> {
  const run = await getRun(ctx.db, runId);
  const parent = run?.parent_run_id ? await getRun(ctx.db, run.parent_run_id) : undefined;
  return parent?.mode === "plan" ? parent.id : runId;
}

interface StillFlagged {
  /** Pending create actions whose flag is still set. */
  readonly kept: Set<number>;
  /** Why the others are cancelled, when known more precisely than "cleared". */
  readonly why: Map<number, string>;
}

/** Whether the source row(s) of an identity still call for its CLIENT control, or why not. */
function verdict(rows: readonly ClassifiedRow[] | undefined): string | null {
  if (!rows || rows.length === 0) return "its row is no longer in the source";
  const valid = rows.filter((r) => r.valid);
  if (valid.length === 0) {
    const r = rows[0];
    return `its source row is now invalid (${r?.anomaly ?? "unknown"}${r?.anomalyDetail ? `: ${r.anomalyDetail}` : ""})`;
  }
  return valid.some((r) => r.userDisabled === true)
    ? null
    : "user_disabled is no longer true in the source";
}

async function stillFlaggedByIds(
  ctx: ReverifyContext,
  source: SourceConfig,
  runId: string,
  since: Date,
): Promise<StillFlagged> {
  const kept = new Set<number>();
  const why = new Map<number, string>();
  for (let after = 0; ; ) {
    const all = await decidedPendingWithFlags(ctx.db, runId, since, after, PAGE);
    if (all.length === 0) break;
    after = all[all.length - 1]?.id ?? after;
    const page = all.filter((a) => a.action === "create");
    const found = await lookupSourceRows(
      ctx.db,
      source,
      page.map((a) => a.identity_id),
    );
    for (const a of page) {
      const why1 = verdict(found.get(a.identity_id) ?? found.get(a.identity_id.toLowerCase()));
      if (why1 === null) kept.add(a.id);
      else why.set(a.id, why1);
    }
  }
  return { kept, why };
}

async function stillFlaggedByPass(
  ctx: ReverifyContext,
  source: SourceConfig,
  runId: string,
  since: Date,
): Promise<StillFlagged> {
  const kept = new Set<number>();
  for await (const batch of readSource(ctx.db, source, { signal: ctx.signal, omitClean: true })) {
    const ids = batch.rows
      .filter((r) => r.valid && r.userDisabled === true && r.identityId !== null)
      .map((r) => r.identityId as string);
    for (let after = 0; ids.length > 0; ) {
      const page = await decidedPendingWithFlags(ctx.db, runId, since, after, PAGE, ids);
      if (page.length === 0) break;
      after = page[page.length - 1]?.id ?? after;
      for (const a of page) if (a.action === "create") kept.add(a.id);
    }
  }
  return { kept, why: new Map() };
}

/** The create is not sent: the flag behind it is gone. */
async function cancel(ctx: ReverifyContext, a: StaleAction, why: string): Promise<void> {
  await updateAction(ctx.db, a.id, {
    status: "skipped",
    outcome: SOURCE_CHANGED,
    error: `re-read before sending: ${why}; not sent`,
  });
}

async function report(
  ctx: ReverifyContext,
  runId: string,
  strategy: SourceRereadStrategy,
  sourceChanged: number,
  fresh: { readonly userDisabled: number; readonly adminDisabled: number },
): Promise<void> {
  const newly = fresh.userDisabled + fresh.adminDisabled;
  const detail =
    `source re-read ${strategy}: ${sourceChanged} pending creates cancelled (flag cleared), ` +
    `${newly} flags newly set (${fresh.userDisabled} user_disabled, ${fresh.adminDisabled} admin_disabled) left for the next run`;
  ctx.logger.info(
    `Re-read the source's flags of the pending creates (${strategy}): ${sourceChanged} cancelled as skipped:${SOURCE_CHANGED} (their flag was cleared).`,
  );
  if (newly > 0) {
    ctx.logger.warn(
      `${newly} flags were newly set in the source since this run read it (${fresh.userDisabled} user_disabled, ${fresh.adminDisabled} admin_disabled): left for the next run; run plan or apply again to act on them.`,
    );
  }
  if (sourceChanged > 0 || newly > 0) {
    await recordRunEvent(ctx.db, runId, "source_reread", currentRequester(), detail);
  }
}
