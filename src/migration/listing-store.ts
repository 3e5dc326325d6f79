/**
 * Where a bulk listing's pages go while the source pass runs beside it.
 *
 * A listed identity holding no control matters to the run only if the source holds it (a
 * candidate to classify, or a row to report): nine in ten do not. Until the source rows are
 * stored that cannot be told, so such identities are put aside in `listed_identities`, a bare heap
 * six times cheaper to write than the snapshot; once they are stored, the ones the source holds
 * move to the snapshot in one statement (`sourceStored`), and later pages store only those.
 * Identities holding a control are always stored at once, with their controls.
 */
import type { Kysely } from "kysely";
import type { Database, NewSnapshotControl, NewSnapshotIdentity } from "../db/schema.ts";
import { insertSnapshot, moveListedToSnapshot } from "../db/snapshot-queries.ts";

export interface ListingStore {
  /** Stores one listing page, in one transaction. */
  page(
    withControls: NewSnapshotIdentity[],
    withoutControls: NewSnapshotIdentity[],
    controls: NewSnapshotControl[],
  ): Promise<void>;
  /**
   * The run's source rows are stored: waits for the pages still being put aside, then moves the
   * identities the source holds to the snapshot. Returns how many moved.
   */
  sourceStored(): Promise<number>;
}

/**
 * A listing store for one run. Without one, `listPlatform` stores every identity it lists.
 *
 * @example
 *   const store = createListingStore(db, runId);
 *   await Promise.all([
 *     loadSource(...).then(() => store.sourceStored()),
 *     listPlatform(ctx, "bulk", hint, onStored, store),
 *   ]);
 */
export function createListingStore(db: Kysely<Database>, runId: string): ListingStore {
  let stored = false;
  const staging = new Set<Promise<void>>();
  return {
    async page(withControls, withoutControls, controls) {
      if (stored) {
        await insertSnapshot(db, withControls, controls, { ifInSource: withoutControls });
        return;
      }
      // Added in the same tick as the check above, so `sourceStored` waits for this page.
      const write = insertSnapshot(db, withControls, controls, { staged: withoutControls });
      staging.add(write);
      try {
        await write;
      } finally {
        staging.delete(write);
      }
    },
    async sourceStored() {
      stored = true;
      await Promise.allSettled([...staging]);
      return moveListedToSnapshot(db, runId);
    },
  };
}
