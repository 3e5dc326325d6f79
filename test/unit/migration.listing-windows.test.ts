import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  acceptPage,
  addWalker,
  grow,
  type ListedItem,
  newWindow,
  replaceWalker,
} from "../../src/migration/read/listing-windows.ts";

const INF = Number.POSITIVE_INFINITY;
const item = (id: string, t: number): ListedItem => ({ id, t });
const ids = (items: readonly ListedItem[]) => items.map((i) => i.id);

describe("acceptPage", () => {
  it("emits an identity once when the ASC and DESC cursors both read it on the millisecond where they meet", () => {
    const w = newWindow(-INF, INF);
    const asc = addWalker(w, "ASC");
    const desc = addWalker(w, "DESC");
    // Five identities share t=20; the platform orders them by id, each cursor from its end.
    assert.deepEqual(ids(acceptPage(asc, [item("a", 10), item("b", 20), item("c", 20)]).fresh), [
      "a",
      "b",
      "c",
    ]);
    const fromTop = acceptPage(desc, [item("z", 30), item("e", 20), item("d", 20), item("c", 20)]);
    assert.deepEqual(ids(fromTop.fresh), ["z", "e", "d"]);
    assert.equal(fromTop.duplicates, 1);
    assert.equal(fromTop.crossed, false, "t=20 may still hold identities neither has read");
    const more = acceptPage(asc, [item("d", 20), item("e", 20), item("z", 30)]);
    assert.deepEqual(ids(more.fresh), []);
    assert.equal(more.duplicates, 2);
    assert.equal(more.crossed, true, "past the other cursor's millisecond: the window is read");
    assert.equal(w.done, true);
  });

  it("ends a cursor at its window's upper edge and leaves the edge millisecond to the next window", () => {
    const w = newWindow(-INF, 100);
    const asc = addWalker(w, "ASC");
    const r = acceptPage(asc, [item("a", 98), item("b", 99), item("c", 100), item("d", 101)]);
    assert.deepEqual(ids(r.fresh), ["a", "b"]);
    assert.equal(r.crossed, true);
  });
});

describe("grow", () => {
  it("opens the other end of a window first, then splits at the middle of what is left", () => {
    const windows = [newWindow(-INF, INF)];
    const asc = addWalker(windows[0]!, "ASC");
    acceptPage(asc, [item("a", 0), item("b", 1000)]);
    const desc = grow(windows, null, 1);
    assert.equal(desc?.order, "DESC");
    assert.equal(desc?.gte, 1000, "the new cursor starts where the first one is");
    acceptPage(desc!, [item("z", 9000), item("y", 8000)]);
    const third = grow(windows, 1 / 1000, 1);
    assert.equal(windows.length, 2);
    const [lower, upper] = windows;
    assert.deepEqual([lower!.lo, lower!.hi, upper!.lo, upper!.hi], [-INF, 4500, 4500, INF]);
    assert.equal(lower!.asc, asc);
    assert.equal(upper!.desc, desc);
    assert.equal(desc!.window, upper);
    assert.equal(third?.window, lower);
    assert.equal(third?.order, "DESC");
    assert.deepEqual([third?.gte, third?.lt], [1000, 4500]);
  });

  it("does not split a window whose cursors stand on the same millisecond", () => {
    const windows = [newWindow(-INF, INF)];
    const asc = addWalker(windows[0]!, "ASC");
    const desc = addWalker(windows[0]!, "DESC");
    acceptPage(asc, [item("a", 5)]);
    acceptPage(desc, [item("z", 5)]);
    assert.equal(grow(windows, 1, 0), null);
  });

  it("adds no cursor where less than the minimum is left to share", () => {
    const windows = [newWindow(-INF, INF)];
    const asc = addWalker(windows[0]!, "ASC");
    const desc = addWalker(windows[0]!, "DESC");
    acceptPage(asc, [item("a", 0)]);
    acceptPage(desc, [item("z", 100)]);
    assert.equal(grow(windows, 1, 1000), null, "about 100 identities left: not two pages each");
  });
});

describe("replaceWalker", () => {
  it("restarts a failed cursor alone from the millisecond it had reached, skipping what it read there", () => {
    const w = newWindow(-INF, 500);
    const asc = addWalker(w, "ASC");
    acceptPage(asc, [item("a", 10), item("b", 20)]);
    const again = replaceWalker(asc);
    assert.deepEqual([again.gte, again.lt], [20, 500]);
    assert.equal(w.asc, again);
    const r = acceptPage(again, [item("b", 20), item("c", 20), item("d", 30)]);
    assert.deepEqual(ids(r.fresh), ["c", "d"]);
  });
});

describe("grow after a hand-over", () => {
  it("never splits a window whose cursor handed over, which would leave a part without a live cursor", () => {
    const windows = [newWindow(-INF, INF)];
    const asc = addWalker(windows[0]!, "ASC");
    const desc = addWalker(windows[0]!, "DESC");
    acceptPage(asc, [item("a", 0), item("b", 10)]);
    acceptPage(desc, [item("z", 100_000), item("y", 99_990)]);
    desc.finished = true;
    assert.equal(grow(windows, 1, 1), null);
    assert.equal(windows.length, 1);
  });
});
