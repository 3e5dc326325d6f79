/**
 * How classified batches reach the database: one statement each (`writeClassified`), or grouped
 * (`GroupedWrites`) where the database runs one statement at a time anyway (PGlite). A batch is
 * what one listing page, held page or caught-up range yields: its snapshot rows, its findings and,
 * for writers, its pending actions, committed together.
 */
import type { Kysely } from "kysely";
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
 * Batches that arrive while a statement runs wait for it, then go together in the next one. A
 * batch that finds nothing running is sent at once, so grouping adds no wait; it only takes the
 * place of a queue the database would hold anyway. On PGlite a page's statement costs about
 * 8 ms, of which about 1.5 ms is its own (parse, plan, commit): five pages in one statement took
 * 6.5 ms a page instead of 8.3 ms, on this project's 1M plan's pages.
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
  readonly #write: ClassifiedWriter;
  readonly #queue: {
    batch: ClassifiedBatch;
    resolve: (n: number) => void;
    reject: (err: unknown) => void;
  }[] = [];
  #running = false;
  /** Statements sent, and batches they held (for the debug log). */
  statements = 0;
  batches = 0;

  constructor(db: Kysely<Database>) {
    this.#write = writeClassified(db);
  }

  readonly write: ClassifiedWriter = (batch) =>
    new Promise<number>((resolve, reject) => {
      this.#queue.push({ batch, resolve, reject });
      if (!this.#running) void this.#drain();
    });

  async #drain(): Promise<void> {
    this.#running = true;
    try {
      while (this.#queue.length > 0) {
        const group = this.#take();
        this.statements += 1;
        this.batches += group.length;
        try {
          const n = await this.#write(merge(group.map((m) => m.batch)));
          for (const [i, m] of group.entries()) m.resolve(i === 0 ? n : 0);
        } catch (err) {
          for (const m of group) m.reject(err);
        }
      }
    } finally {
      this.#running = false;
    }
  }

  /** The queue's head, and what follows it up to {@link GROUP_FINDINGS} findings. */
  #take() {
    let findings = this.#queue[0]?.batch.findings.length ?? 0;
    let n = 1;
    while (n < this.#queue.length) {
      const next = this.#queue[n]?.batch.findings.length ?? 0;
      if (findings + next > GROUP_FINDINGS) break;
      findings += next;
      n += 1;
    }
    return this.#queue.splice(0, n);
  }
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
