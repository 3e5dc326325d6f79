/**
 * Claims of listed identities the source does not hold, while the source index is complete
 * (`listed-once.ts`): kept in memory in a compact table up to their bound, so a platform with
 * hundreds of thousands of control holders outside the source needs no claim statement, and in
 * the database past it; a repeat is dropped either way.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import type { ClaimAnswer } from "../../src/db/journal/claim-queries.ts";
import { ListedOnce, OUTSIDE_PER_INDEX_ID } from "../../src/migration/classify/listed-once.ts";
import { SourceIndex } from "../../src/migration/read/source-index.ts";

const inSource = randomUUID();

/** A complete index holding one source id. */
function completeIndex(): SourceIndex {
  const index = new SourceIndex();
  index.set(inSource, { valid: true, userDisabled: true, adminDisabled: false });
  return index;
}

/** A control holder the source does not hold. */
const holder = (id: string) => ({ id, controls: [{}] });
const ids = (c: { items: readonly { id: string }[] }) => c.items.map((i) => i.id);

describe("claims outside a complete source index", () => {
  it("keeps 300,000 control holders outside the source in memory, sends none to the database, and drops each one's repeat", async () => {
    const sent: string[] = [];
    const once = new ListedOnce(completeIndex(), async (_batch, batchIds) => {
      sent.push(...batchIds);
      return [];
    });
    const outside = Array.from({ length: 300_000 }, () => randomUUID());
    for (let i = 0; i < outside.length; i += 1000) {
      const page = outside.slice(i, i + 1000).map(holder);
      assert.equal((await once.claim(page)).items.length, 1000);
    }
    assert.equal(sent.length, 0, "claims sent to the database");
    assert.equal(once.inDatabase, false);
    const again = [outside[0], outside[123_456], outside[299_999]].map((id) =>
      holder(id as string),
    );
    assert.deepEqual(ids(await once.claim(again)), []);
    assert.equal(once.repeats, 3);
  });

  it("holds 8 outside ids per id of the index's bound by default", () => {
    assert.equal(OUTSIDE_PER_INDEX_ID, 8);
    assert.equal(new SourceIndex().limit * OUTSIDE_PER_INDEX_ID, 1_048_576);
  });

  it("claims in the database once the outside claims reach their bound, and still drops a repeat of one claimed in memory", async () => {
    const asked: string[][] = [];
    const once = new ListedOnce(
      completeIndex(),
      async (_batch, batchIds): Promise<ClaimAnswer[]> => {
        asked.push([...batchIds]);
        return batchIds.map((identity_id) => ({
          identity_id,
          claimed: true,
          rows: 0,
          valid: null,
          user_disabled: null,
          admin_disabled: null,
        }));
      },
      2,
    );
    const [x, y, z] = [randomUUID(), randomUUID(), randomUUID()];
    assert.deepEqual(ids(await once.claim([holder(x), holder(y)])), [x, y]);
    assert.equal(asked.length, 0);
    assert.deepEqual(ids(await once.claim([holder(z)])), [z]);
    assert.deepEqual(asked, [[z]]);
    assert.deepEqual(ids(await once.claim([holder(x)])), []);
    assert.equal(asked.length, 1, "a repeat of a claim held in memory is not asked");
    assert.equal(once.repeats, 1);
  });

  it("keeps ids that are not lower-case UUIDs as exactly as the others", async () => {
    const once = new ListedOnce(completeIndex(), async () => {
      throw new Error("a claim reached the database");
    });
    const odd = ["CUSTOMER-1", "6A591C0C-3E0F-4494-8559-5DC864060D39", "x"];
    assert.deepEqual(ids(await once.claim(odd.map(holder))), odd);
    assert.deepEqual(ids(await once.claim([holder("x"), holder("X")])), ["X"]);
    assert.equal(once.repeats, 1);
  });
});
