import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ActiveControlIndex } from "../../src/identity/active-control-index.ts";
import { KeysetIndex, mergeWalks, takePage } from "../../src/paging/keyset-index.ts";

type R = { createdAtMs: number; id: string };
const rec = (t: number, id: string): R => ({ createdAtMs: t, id });
const idsOf = (items: readonly R[]) => items.map((r) => r.id);

function indexOf(records: R[]): KeysetIndex<R> {
  const index = new KeysetIndex<R>();
  index.addMany(records);
  return index;
}

describe("KeysetIndex", () => {
  const index = indexOf([rec(3, "c"), rec(1, "a"), rec(2, "b2"), rec(2, "b1"), rec(4, "d")]);

  it("keeps records in (created_at, id) order whatever the insertion order", () => {
    assert.deepEqual(idsOf(index.all()), ["a", "b1", "b2", "c", "d"]);
    index.insert(rec(2, "b0"));
    index.insert(rec(9, "z"));
    assert.deepEqual(idsOf(index.all()), ["a", "b0", "b1", "b2", "c", "d", "z"]);
    assert.equal(index.remove(rec(2, "b0")), true);
    assert.equal(index.remove(rec(9, "z")), true);
    assert.equal(index.remove(rec(9, "z")), false, "a second remove finds nothing");
  });

  it("walks strictly after a position in either order", () => {
    const asc = takePage(index.walk("ASC", { t: 2, id: "b1" }), 10);
    assert.deepEqual(idsOf(asc.items), ["b2", "c", "d"]);
    const desc = takePage(index.walk("DESC", { t: 2, id: "b2" }), 10);
    assert.deepEqual(idsOf(desc.items), ["b1", "a"]);
  });

  it("narrows a walk to inclusive created_at bounds, both orders, with and without a position", () => {
    const bounds = { lo: 2, hi: 3 };
    assert.deepEqual(idsOf(takePage(index.walk("ASC", undefined, bounds), 10).items), [
      "b1",
      "b2",
      "c",
    ]);
    assert.deepEqual(idsOf(takePage(index.walk("DESC", undefined, bounds), 10).items), [
      "c",
      "b2",
      "b1",
    ]);
    assert.deepEqual(
      idsOf(takePage(index.walk("DESC", { t: 4, id: "d" }, { lo: 2, hi: 9 }), 10).items),
      ["c", "b2", "b1"],
    );
    assert.deepEqual(takePage(index.walk("ASC", undefined, { lo: 5, hi: 4 }), 10).items, []);
  });

  it("says there is more only when another matching record follows the page", () => {
    assert.equal(takePage(index.walk("ASC", undefined), 5).more, false);
    assert.equal(takePage(index.walk("ASC", undefined), 4).more, true);
    const onlyB = (r: R) => r.id.startsWith("b");
    assert.deepEqual(takePage(index.walk("ASC", undefined), 2, onlyB), {
      items: [rec(2, "b1"), rec(2, "b2")],
      more: false,
    });
  });

  it("skips an offset of matches and counts matches", () => {
    const page = index.pageFromOffset("DESC", 1, 2, () => true);
    assert.deepEqual(idsOf(page.items), ["c", "b2"]);
    assert.equal(page.more, true);
    assert.equal(
      index.count((r) => r.createdAtMs === 2),
      2,
    );
  });
});

describe("mergeWalks", () => {
  it("merges walks into one keyset order and lists a record held by two indexes once", () => {
    const shared = rec(2, "s");
    const a = indexOf([rec(1, "a1"), shared, rec(5, "a5")]);
    const b = indexOf([shared, rec(3, "b3"), rec(4, "b4")]);
    const asc = takePage(
      mergeWalks([a.walk("ASC", undefined), b.walk("ASC", undefined)], "ASC"),
      10,
    );
    assert.deepEqual(idsOf(asc.items), ["a1", "s", "b3", "b4", "a5"]);
    const desc = mergeWalks(
      [a.walk("DESC", { t: 5, id: "a5" }), b.walk("DESC", { t: 5, id: "a5" })],
      "DESC",
    );
    assert.deepEqual(idsOf(takePage(desc, 10).items), ["b4", "b3", "s", "a1"]);
  });
});

describe("ActiveControlIndex", () => {
  type I = R & { controls: { type: string; reason_code: string; deleted_at?: string }[] };
  const identity = (id: string): I => ({ createdAtMs: 1, id, controls: [] });

  it("holds an identity while it has at least one active control of the type or reason code", () => {
    const index = new ActiveControlIndex<I>();
    const x = identity("x");
    const first = { type: "SELL_ONLY", reason_code: "OTHER" } as I["controls"][number];
    const second = { type: "SELL_ONLY", reason_code: "RISK_FRAUD" } as I["controls"][number];
    x.controls.push(first);
    index.activated(x, first);
    x.controls.push(second);
    index.activated(x, second);
    assert.equal(index.byType("SELL_ONLY")?.size, 1, "listed once");
    first.deleted_at = "now";
    index.deactivated(x, first);
    assert.equal(index.byType("SELL_ONLY")?.size, 1, "still holds a SELL_ONLY");
    assert.equal(index.byReason("OTHER")?.size, 0);
    assert.equal(index.byReason("RISK_FRAUD")?.size, 1);
    second.deleted_at = "now";
    index.deactivated(x, second);
    assert.equal(index.byType("SELL_ONLY")?.size, 0);
  });

  it("merges a batch's additions once, in keyset order", () => {
    const index = new ActiveControlIndex<I>();
    const people = [identity("c"), identity("a"), identity("b")];
    index.batch(() => {
      for (const p of people) {
        const c = { type: "FROZEN", reason_code: "LEGAL_ORDER" };
        p.controls.push(c);
        index.activated(p, c);
        assert.equal(index.byType("FROZEN")?.size, 0, "nothing merged inside the batch");
      }
    });
    assert.deepEqual(idsOf(index.byType("FROZEN")?.all() ?? []), ["a", "b", "c"]);
  });
});
