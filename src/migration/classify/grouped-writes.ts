/**
 * How classified batches reach the database: one statement each (`writeClassified`), or grouped
 * (`GroupedWrites`) where the database runs one statement at a time anyway (PGlite). A batch is
 * what one listing page, held page or caught-up range yields: its snapshot rows, its findings and,
 * for writers, its pending actions, committed together.
 */
import type { Kysely } from "kysely";
import { GroupCommit } from "../../db/group-commit.ts";
import { snapshotWrites } from "../../db/journal/snapshot-queries.ts";
import { type PendingActionOf, storeClassified } from "../../db/journal/store-classified.ts";
import type {
  Database,
  NewFinding,
  NewSnapshotControl,
  NewSnapshotIdentity,
} from "../../db/schema.ts";

export interface ClassifiedBatch {
  readonly identities: readonly NewSnapshotIdentity[];
  readonly controls: readonly NewSnapshotControl[];
  readonly findings: readonly NewFinding[];
  readonly actions: readonly PendingActionOf[];
}

/** Stores a batch; resolves with the actions journaled (see `GroupedWrites` for a group's count). */
export type ClassifiedWriter = (batch: ClassifiedBatch) => Promise<number>;

/** One statement for one batch. */
export function writeClassified(db: Kysely<Database>): ClassifiedWriter {
  return (b) =>
    storeClassified(db, snapshotWrites(b.identities, b.controls), b.findings, b.actions);
}

/**
 * Findings a grouped statement holds at most: two pages of flagged identities, about 17 pages of
 * a synthetic source. With actions, the inserted findings come back, well inside PGlite's 1 MB
 * receive buffer.
 */
const GROUP_FINDINGS = 2000;

/**
 * Batches that arrive while a statement runs go together in the next one (`GroupCommit`). On
 * PGlite a page's statement costs about 8 ms, of which about 1.5 ms is its own (parse, plan,
 * commit): five pages in one statement took 6.5 ms a page instead of 8.3 ms, on this project's 1M
 * plan's pages.
 *
 * A group commits or fails whole: every batch in it resolves or rejects with the statement. Its
 * count of journaled actions (one number for the statement) resolves the group's first batch, and
 * 0 the others, so the sum over batches stays exact.
 *
 * An identity is in one batch's snapshot rows at most once, and the listing claims each one once
 * (`listed-once.ts`), but an identity that is not claimed (outside the source, no control, a
 * platform legacy field true) may come in two pages: the group keeps its last row, as two
 * statements would have left it.
 *
 * @example
 *   const writes = new GroupedWrites(db);
 *   await Promise.all(pages.map((p) => writes.write(p))); // fewer statements than pages
 */
export class GroupedWrites {
  readonly #commit: GroupCommit<ClassifiedBatch, number>;

  constructor(db: Kysely<Database>) {
    const write = writeClassified(db);
    this.#commit = new GroupCommit({
      take: headWithin,
      run: async (batches) => {
        const n = await write(merge(batches));
        return batches.map((_, i) => (i === 0 ? n : 0));
      },
    });
  }

  readonly write: ClassifiedWriter = (batch) => this.#commit.submit(batch);

  /** Statements sent (for the debug log). */
  get statements(): number {
    return this.#commit.statements;
  }

  /** Batches those statements held. */
  get batches(): number {
    return this.#commit.writes;
  }
}

/** How many of the queue's first batches go together: up to {@link GROUP_FINDINGS} findings. */
function headWithin(queue: readonly ClassifiedBatch[]): number {
  let findings = queue[0]?.findings.length ?? 0;
  let n = 1;
  while (n < queue.length) {
    const next = queue[n]?.findings.length ?? 0;
    if (findings + next > GROUP_FINDINGS) break;
    findings += next;
    n += 1;
  }
  return n;
}

/** One batch of several; an identity's snapshot row is its last. */
function merge(batches: readonly ClassifiedBatch[]): ClassifiedBatch {
  if (batches.length === 1) return batches[0] as ClassifiedBatch;
  const identities = new Map<string, NewSnapshotIdentity>();
  for (const b of batches) for (const i of b.identities) identities.set(i.identity_id, i);
  return {
    identities: [...identities.values()],
    controls: batches.flatMap((b) => b.controls),
    findings: batches.flatMap((b) => b.findings),
    actions: batches.flatMap((b) => b.actions),
  };
}
