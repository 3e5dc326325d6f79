/**
 * The few lines every rendering of a run's summary says beside its tables (summary.md,
 * report.html and the terminal alike): what the run read of its candidates and what it did not
 * look for, a listing that omitted identities, and books that do not balance (issue 50).
 */
import { thousands } from "../thousands.ts";

/** What the notes read of summary.json (structural: summary.ts renders them, no import circle). */
export interface NotesInput {
  readonly platform_state?: { readonly listing: object | null } | null;
  readonly ledger_error?: { readonly message: string } | null;
  readonly coverage?: {
    readonly candidates: number;
    readonly candidates_read: number;
    readonly read_failed: number;
    readonly not_looked_for: readonly string[];
    readonly mode?: "complete" | "incremental";
    readonly reason?: string;
    readonly since?: string;
    readonly view_run_id?: string;
    readonly carried?: number;
  } | null;
}

/**
 * "read 9,843 of 10,000 candidates (157 read failed); not looked for: platform_will_restrict".
 *
 * @example
 *   coverageLine({ candidates: 3, candidates_read: 3, read_failed: 0, not_looked_for: [] })
 *   // "read 3 of 3 candidates; not looked for: none"
 */
export function coverageLine(c: NonNullable<NotesInput["coverage"]>): string {
  const failed = c.read_failed > 0 ? ` (${thousands(c.read_failed)} read failed)` : "";
  const unseen = c.not_looked_for.length > 0 ? c.not_looked_for.join(", ") : "none";
  return `read ${thousands(c.candidates_read)} of ${thousands(c.candidates)} candidates${failed}; not looked for: ${unseen}${sinceLastPart(c)}`;
}

/** `--since-last` (issue 55): "; incremental since …, 19,800 identities carried …", or why complete. */
function sinceLastPart(c: NonNullable<NotesInput["coverage"]>): string {
  if (c.mode === "incremental") {
    return `; incremental since ${c.since}: ${thousands(c.carried ?? 0)} identities not changed since were carried as last observed (from run ${c.view_run_id})`;
  }
  return c.mode === "complete" ? `; complete (--since-last: ${c.reason})` : "";
}

/** A listing figure of summary.json's `platform_state.listing` (a number, else 0). */
const listingFigure = (s: NotesInput, key: string): number => {
  const v = (s.platform_state?.listing as Record<string, unknown> | null | undefined)?.[key];
  return typeof v === "number" ? v : 0;
};

/**
 * The run's notes, one sentence each, in the order they are shown; empty when there is nothing
 * to say beyond the tables.
 *
 * @example
 *   runNotes(summary) // ["The listing omitted 2 candidate identities: ..."]
 */
export function runNotes(s: NotesInput): string[] {
  const notes: string[] = s.coverage ? [`Coverage: ${coverageLine(s.coverage)}.`] : [];
  const omitted = listingFigure(s, "omitted");
  if (omitted > 0) {
    notes.push(
      `The listing omitted ${thousands(omitted)} candidate ${omitted === 1 ? "identity" : "identities"} that a read by id found: ${omitted === 1 ? "it was" : "they were"} classified from that read, not as identity_not_found.`,
    );
  }
  if (s.ledger_error) notes.push(s.ledger_error.message);
  return notes;
}
