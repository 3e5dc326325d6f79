/**
 * A listing page that arrives before the source rows are stored: held in memory, its ids packed
 * ({@link PackedIds}) and its control holders as one JSON text, and unpacked again once the source
 * rows are stored; or, past the memory the stream allows, stored at once (holders with their
 * controls in the snapshot, the rest put aside in `listed_identities`).
 */
import type { Kysely } from "kysely";
import { snapshotWrites, stageWrite } from "../../db/journal/snapshot-queries.ts";
import { chainWrites } from "../../db/journal/unnest-insert.ts";
import type { Database, NewSnapshotControl, NewSnapshotIdentity } from "../../db/schema.ts";
import {
  type ListedIdentity,
  NO_CONTROLS,
  type PackedHolder,
  packHolder,
  unpackHolder,
} from "./listed-identity.ts";
import { PackedIds } from "./packed-ids.ts";
import {
  legacyCode,
  legacyOfCode,
  legacySaid,
  legacyTrue,
  snapshotIdentity,
} from "./three-way-listing.ts";

/**
 * A listing page held in memory: the ids of identities with no control, packed, and the others
 * (one in twenty) as one JSON text of tuples, a sixth of their size as objects.
 */
export interface HeldPage {
  readonly ids: PackedIds;
  /** Ids without a control whose legacy fields are not both false, by `legacyCode`. */
  readonly marked: Map<number, PackedIds>;
  readonly holders: string;
  readonly bytes: number;
}

/** Packs a page to be held in memory. */
export function packHeldPage(identities: readonly ListedIdentity[]): HeldPage {
  const ids = new PackedIds();
  const marked = new Map<number, PackedIds>();
  const holders: ListedIdentity[] = [];
  for (const i of identities) {
    if (i.controls.length > 0) holders.push(i);
    else if (!legacySaid(i.legacy)) ids.push(i.id);
    else {
      const code = legacyCode(i.legacy);
      const bucket = marked.get(code) ?? new PackedIds();
      marked.set(code, bucket);
      bucket.push(i.id);
    }
  }
  const text = JSON.stringify(holders.map(packHolder));
  let bytes = 128 + ids.bytes + text.length;
  for (const bucket of marked.values()) bytes += bucket.bytes;
  return { ids, marked, holders: text, bytes };
}

/** The identities of held pages, as listed (holders first, then the packed ids). */
export function unpackHeldPages(pages: readonly HeldPage[], runId: string): ListedIdentity[] {
  const identities: ListedIdentity[] = [];
  for (const page of pages) {
    for (const h of JSON.parse(page.holders) as PackedHolder[]) {
      identities.push(unpackHolder(h, runId));
    }
    for (const id of page.ids.toArray()) identities.push({ id, controls: NO_CONTROLS });
    for (const [code, bucket] of page.marked) {
      const legacy = legacyOfCode(code);
      for (const id of bucket.toArray()) identities.push({ id, controls: NO_CONTROLS, legacy });
    }
  }
  return identities;
}

/** Before the source rows are stored, past `memoryBytes`: holders with their controls, the rest put aside. */
export async function stagePage(
  db: Kysely<Database>,
  runId: string,
  identities: readonly ListedIdentity[],
): Promise<void> {
  const held: NewSnapshotIdentity[] = [];
  const aside: { run_id: string; identity_id: string }[] = [];
  const controls: NewSnapshotControl[] = [];
  for (const i of identities) {
    if (i.controls.length > 0 || legacyTrue(i.legacy)) {
      held.push(snapshotIdentity(runId, i, "listing"));
      controls.push(...i.controls);
    } else aside.push({ run_id: runId, identity_id: i.id });
  }
  const stage = stageWrite(aside);
  const writes = snapshotWrites(held, controls);
  if (stage) writes.push(stage);
  await chainWrites(writes)?.execute(db);
}
