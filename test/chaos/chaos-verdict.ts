/**
 * The end-of-phase checks of the chaos suite, from the two sources of truth: the sandbox (what the
 * platform really holds) and the tool's journal and report (what the tool believes it did).
 *
 * @example
 *   const v = await verdictOf(workload, summary);
 *   if (v.duplicates || v.missing || v.nonFinalActions || v.reportMismatches.length) fail();
 */
import { sql } from "kysely";
import type { RunSummary } from "../../src/reports/summary.ts";
import type { Workload } from "./chaos-workload.ts";

export interface Verdict {
  /** Surplus active client SELL_ONLY controls (sandbox integrity counter). */
  readonly duplicates: number;
  /** Expected identities without an active client SELL_ONLY. */
  readonly missing: number;
  /** Active client SELL_ONLY controls on identities whose user_disabled is false. */
  readonly stray: number;
  /** Journal actions of any run still pending, in_flight or ambiguous. */
  readonly nonFinalActions: number;
  /** Journal creates that succeeded (created or adopted), all runs. */
  readonly journalCreates: number;
  /** Every way the last run's summary.json disagrees with the sandbox, as sentences. */
  readonly reportMismatches: readonly string[];
}

const isClientSellOnly = (c: { type: string; set_by: string }) =>
  c.type === "SELL_ONLY" && (c.set_by === "CLIENT" || c.set_by === "SET_BY_CLIENT");

/** Checks the sandbox, the journal and the last run's summary against each other. */
export async function verdictOf(w: Workload, last: RunSummary): Promise<Verdict> {
  const stats = w.sandbox.stats();
  let missing = 0;
  let duplicated = 0;
  for (const id of w.expectedClient) {
    const n = w.sandbox.controlsOf(id).filter(isClientSellOnly).length;
    if (n === 0) missing += 1;
    if (n > 1) duplicated += n - 1;
  }
  const duplicates = Math.max(duplicated, stats.integrity.duplicateClientSellOnlyControls);
  const stray =
    stats.integrity.activeClientSellOnly - (w.expectedClient.length - missing) - duplicates;

  const h = await w.target.open();
  let nonFinalActions: number;
  let journalCreates: number;
  try {
    const r = await sql<{ non_final: number; creates: number }>`
      select count(*) filter (where status in ('pending', 'in_flight', 'ambiguous'))::int as non_final,
             count(*) filter (where action = 'create' and status = 'succeeded'
                                and outcome in ('created', 'adopted'))::int as creates
      from controls_migration.actions`.execute(h.db);
    nonFinalActions = Number(r.rows[0]?.non_final ?? 0);
    journalCreates = Number(r.rows[0]?.creates ?? 0);
  } finally {
    await h.close();
  }

  const mismatches: string[] = [];
  const expect = (what: string, reported: unknown, truth: unknown) => {
    if (reported !== truth) mismatches.push(`${what}: report says ${reported}, truth is ${truth}`);
  };
  const f = last.findings;
  const o = last.outcomes;
  const done = (o["succeeded:created"] ?? 0) + (o["succeeded:adopted"] ?? 0);
  expect("last run status", last.status, "completed");
  expect("last run exit code", last.exit_code, 0);
  expect(
    "in_sync + created + adopted of the last run vs active client SELL_ONLY controls",
    (f.in_sync ?? 0) + done,
    stats.integrity.activeClientSellOnly,
  );
  expect(
    "missing_client_control vs creates the last run settled",
    f.missing_client_control ?? 0,
    done,
  );
  expect(
    // The sandbox's legacy admin_disabled equals the source's: the platform's own migration will
    // create each SERVICE control (awaiting_platform_migration); the client side is created at once.
    "missing_service_control + awaiting_platform_migration vs admin_disabled identities (no service control exists)",
    (f.missing_service_control ?? 0) + (f.awaiting_platform_migration ?? 0),
    w.adminDisabled,
  );
  for (const k of ["identity_not_found", "read_failed", "invalid_source_row", "attribute_mismatch"])
    expect(`${k} findings`, f[k] ?? 0, 0);
  expect("source candidates", last.source.candidates, w.candidates);
  expect("source rows read", last.source.rows_read, w.identities);
  expect(
    "journal creates (created or adopted, all runs) vs POSTs the platform committed",
    journalCreates,
    stats.writes.creates,
  );
  return {
    duplicates,
    missing,
    stray,
    nonFinalActions,
    journalCreates,
    reportMismatches: mismatches,
  };
}
