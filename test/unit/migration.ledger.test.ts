/**
 * The run's ledger (issue 26 §1): the pure check that decides whether a run's books balance, and
 * the claim that keeps a listed identity classified once however often the listing serves it.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { LedgerCounts } from "../../src/db/journal/ledger-queries.ts";
import { ListedOnce, lastCopies } from "../../src/migration/classify/listed-once.ts";
import { SourceIndex } from "../../src/migration/read/source-index.ts";
import { checkLedger } from "../../src/migration/run/ledger.ts";

const balanced: LedgerCounts = {
  candidates: 2500,
  candidatesWithoutFinding: 0,
  repeatedFindings: 0,
  createFindings: 2500,
  deleteFindings: 0,
  orphanFindings: 0,
  createActions: 2500,
  deleteActions: 0,
  findingsActedTwice: 0,
  actions: 2500,
  findings: 2500,
};
const apply = { journalCreates: true, journalDeletes: false };
const reported = { findings: 2500, actions: 2500 };

describe("checkLedger", () => {
  it("finds no gap when every candidate has a finding, every create finding its action and the report the journal's counts", () => {
    assert.equal(checkLedger(balanced, apply, reported), null);
  });

  it("names the findings stage and both counts when 1,483 of 2,500 candidates have no finding", () => {
    const gap = checkLedger({ ...balanced, candidatesWithoutFinding: 1483 }, apply, reported);
    assert.equal(gap?.stage, "findings");
    assert.equal(gap?.expected, 2500);
    assert.equal(gap?.actual, 1017);
    assert.match(gap?.message ?? "", /findings stage.*expected 2500, counted 1017/);
  });

  it("names the findings stage when a finding is stored twice", () => {
    const gap = checkLedger({ ...balanced, repeatedFindings: 3, findings: 2503 }, apply, reported);
    assert.equal(gap?.stage, "findings");
    assert.equal(gap?.actual, 2503);
  });

  it("names the journal stage when a create finding has no action", () => {
    const gap = checkLedger({ ...balanced, createActions: 2499, actions: 2499 }, apply, {
      findings: 2500,
      actions: 2499,
    });
    assert.equal(gap?.stage, "journal");
    assert.deepEqual([gap?.expected, gap?.actual], [2500, 2499]);
  });

  it("expects no action at all from a plan, and names the journal stage when one exists", () => {
    const plan = { journalCreates: false, journalDeletes: false };
    assert.equal(
      checkLedger({ ...balanced, createActions: 0, actions: 0 }, plan, {
        findings: 2500,
        actions: 0,
      }),
      null,
    );
    assert.equal(checkLedger(balanced, plan, reported)?.stage, "journal");
  });

  it("names the journal stage when a finding has two actions", () => {
    const gap = checkLedger({ ...balanced, findingsActedTwice: 1, actions: 2501 }, apply, reported);
    assert.equal(gap?.stage, "journal");
  });

  it("names the report stage when the report counts other findings or actions than the journal", () => {
    assert.equal(checkLedger(balanced, apply, { findings: 2499, actions: 2500 })?.stage, "report");
    assert.equal(checkLedger(balanced, apply, { findings: 2500, actions: 2498 })?.stage, "report");
  });

  it("expects a delete for each orphaned own control under --prune-orphans, and none without it", () => {
    const orphans = { ...balanced, orphanFindings: 6, deleteActions: 6, actions: 2506 };
    const pruneOrphans = { ...apply, pruneOrphans: true };
    assert.equal(checkLedger(orphans, pruneOrphans, { findings: 2500, actions: 2506 }), null);
    const gap = checkLedger(orphans, apply, { findings: 2500, actions: 2506 });
    assert.equal(gap?.stage, "journal");
    assert.equal(gap?.expected, 0);
    assert.equal(gap?.actual, 6);
    const both = { ...orphans, deleteFindings: 2, deleteActions: 8, actions: 2508 };
    const prune = { ...pruneOrphans, journalDeletes: true };
    assert.equal(checkLedger(both, prune, { findings: 2500, actions: 2508 }), null);
  });
});

describe("ListedOnce", () => {
  const a = "00000000-0000-4000-8000-00000000000a";
  const b = "00000000-0000-4000-8000-00000000000b";
  const outside = "00000000-0000-4000-8000-0000000000ff";
  const indexOf = () => {
    const index = new SourceIndex();
    index.set(a, { valid: true, userDisabled: true, adminDisabled: false });
    index.set(b, { valid: true, userDisabled: true, adminDisabled: false });
    return index;
  };

  it("keeps the last copy of an identity served twice within a page, in first-seen order", () => {
    const { items, dropped } = lastCopies([
      { id: a, v: 1 },
      { id: b, v: 1 },
      { id: a, v: 2 },
    ]);
    assert.deepEqual(items, [
      { id: a, v: 2 },
      { id: b, v: 1 },
    ]);
    assert.equal(dropped, 1);
  });

  it("hands back a page that repeats no identity as it is, with nothing dropped", () => {
    const page = [{ id: a }, { id: b }];
    const { items, dropped } = lastCopies(page);
    assert.equal(items, page);
    assert.equal(dropped, 0);
  });

  /** The index holds every source row here: no claim may reach a database. */
  const noDatabase = async (): Promise<never> => {
    throw new Error("a claim reached the database while the index was complete");
  };
  const ids = (c: { items: readonly { id: string }[] }) => c.items.map((i) => i.id);

  it("drops an identity a later page serves again, and counts every dropped copy", async () => {
    const once = new ListedOnce(indexOf(), noDatabase);
    const held = [{ id: outside, controls: [{}] }];
    assert.deepEqual(ids(await once.claim([{ id: a, controls: [] }, ...held])), [a, outside]);
    assert.deepEqual(
      ids(
        await once.claim([
          { id: a, controls: [] },
          { id: b, controls: [] },
          { id: b, controls: [] },
          ...held,
        ]),
      ),
      [b],
    );
    assert.equal(once.repeats, 3);
    assert.equal(once.inDatabase, false);
  });

  it("claims once an identity outside the source whose platform legacy fields are set", async () => {
    const once = new ListedOnce(indexOf(), noDatabase);
    const marked = {
      id: outside,
      controls: [],
      legacy: { userDisabled: true, adminDisabled: null },
    };
    assert.deepEqual(ids(await once.claim([marked])), [outside]);
    assert.deepEqual(ids(await once.claim([marked])), []);
    assert.equal(once.repeats, 1);
  });

  it("leaves out rows read back from the database whose identity a page already claimed", async () => {
    const once = new ListedOnce(indexOf(), noDatabase);
    await once.claim([{ id: a, controls: [] }]);
    const { items } = await once.claimIds([{ identity_id: a }, { identity_id: b }]);
    assert.deepEqual(
      items.map((r) => r.identity_id),
      [b],
    );
  });
});
