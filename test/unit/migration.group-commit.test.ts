import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GroupCommit } from "../../src/migration/group-commit.ts";

/** A writer whose batches finish only when the test says so. */
function heldWriter() {
  const batches: number[][] = [];
  const releases: ((err?: Error) => void)[] = [];
  const write = (items: number[]) =>
    new Promise<void>((resolve, reject) => {
      batches.push(items);
      releases.push((err) => (err ? reject(err) : resolve()));
    });
  return { batches, releases, write };
}

const tick = () => new Promise((r) => setImmediate(r));

describe("group commit of journal writes", () => {
  it("writes the first item at once and alone when nothing is being written", async () => {
    const w = heldWriter();
    const gc = new GroupCommit(w.write);
    const done = gc.add(1);
    await tick();
    assert.deepEqual(w.batches, [[1]]);
    w.releases[0]?.();
    await done;
  });

  it("puts everything that arrived during a write into the next statement", async () => {
    const w = heldWriter();
    const gc = new GroupCommit(w.write);
    const first = gc.add(1);
    await tick();
    const rest = [2, 3, 4].map((n) => gc.add(n));
    await tick();
    assert.deepEqual(w.batches, [[1]], "nothing else is written while the first batch runs");
    w.releases[0]?.();
    await first;
    await tick();
    assert.deepEqual(w.batches, [[1], [2, 3, 4]]);
    w.releases[1]?.();
    await Promise.all(rest);
  });

  it("settles a caller only once its own batch is committed", async () => {
    const w = heldWriter();
    const gc = new GroupCommit(w.write);
    void gc.add(1);
    await tick();
    let settled = false;
    const second = gc.add(2).then(() => {
      settled = true;
    });
    w.releases[0]?.();
    await tick();
    await tick();
    assert.equal(settled, false, "item 2 is not committed while its batch is still being written");
    w.releases[1]?.();
    await second;
    assert.equal(settled, true);
  });

  it("rejects every caller of a failed batch with its error, and writes later batches", async () => {
    const w = heldWriter();
    const gc = new GroupCommit(w.write);
    const first = gc.add(1);
    await tick();
    const failed = [gc.add(2), gc.add(3)];
    w.releases[0]?.();
    await first;
    await tick();
    w.releases[1]?.(new Error("connection lost"));
    for (const p of failed) await assert.rejects(p, /connection lost/);
    const later = gc.add(4);
    await tick();
    assert.deepEqual(w.batches.at(-1), [4]);
    w.releases[2]?.();
    await later;
  });

  it("bounds a batch at its maximum", async () => {
    const w = heldWriter();
    const gc = new GroupCommit(w.write, 2);
    const all = [gc.add(1)];
    await tick();
    all.push(gc.add(2), gc.add(3), gc.add(4));
    w.releases[0]?.();
    await tick();
    w.releases[1]?.();
    await tick();
    w.releases[2]?.();
    await Promise.all(all);
    assert.deepEqual(w.batches, [[1], [2, 3], [4]]);
  });
});
