/**
 * The group commit shared by the journal's writes and the classified batches (`group-commit.ts`):
 * what arrives while a statement runs goes in the next one, each caller settles with its own
 * statement, and the policy chooses what a statement holds.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GroupCommit } from "../../src/db/group-commit.ts";

/** A statement that waits until released, recording what it held. */
function gatedRun() {
  const statements: number[][] = [];
  const gates: (() => void)[] = [];
  const run = async (writes: readonly number[]) => {
    statements.push([...writes]);
    await new Promise<void>((resolve) => gates.push(resolve));
    return writes.map((w) => w * 10);
  };
  const release = async () => {
    while (gates.length === 0) await new Promise((r) => setImmediate(r));
    gates.shift()?.();
  };
  return { statements, run, release };
}

describe("group commit", () => {
  it("sends a write that finds nothing running at once, and the writes that arrive meanwhile together in the next statement", async () => {
    const g = gatedRun();
    const commit = new GroupCommit<number, number>({ take: (q) => q.length, run: g.run });
    const results = [1, 2, 3, 4].map((n) => commit.submit(n));
    await g.release();
    await g.release();
    assert.deepEqual(await Promise.all(results), [10, 20, 30, 40]);
    assert.deepEqual(g.statements, [[1], [2, 3, 4]]);
    assert.equal(commit.statements, 2);
    assert.equal(commit.writes, 4);
  });

  it("settles a caller only once the statement that holds its write has committed", async () => {
    const g = gatedRun();
    const commit = new GroupCommit<number, number>({ take: (q) => q.length, run: g.run });
    let settled = false;
    const p = commit.submit(7).then(() => {
      settled = true;
    });
    await new Promise((r) => setImmediate(r));
    assert.equal(settled, false);
    await g.release();
    await p;
    assert.equal(settled, true);
  });

  it("rejects every write of a failed statement and goes on with the next one", async () => {
    const statements: number[][] = [];
    const commit = new GroupCommit<number, string>({
      take: (q) => q.length,
      run: async (writes) => {
        statements.push([...writes]);
        await new Promise((r) => setImmediate(r));
        if (writes.includes(2)) throw new Error("statement failed");
        return writes.map(String);
      },
    });
    const outcomes = await Promise.allSettled([1, 2, 3, 4].map((n) => commit.submit(n)));
    assert.equal(outcomes.length, 4);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ["fulfilled", "rejected", "rejected", "rejected"],
    );
    assert.deepEqual(statements, [[1], [2, 3, 4]]);
    assert.equal(await commit.submit(5), "5");
  });

  it("holds in a statement only the positions its policy takes, leaving the others queued in their order", async () => {
    const g = gatedRun();
    const odd = (q: readonly number[]) =>
      q.flatMap((w, i) => (i === 0 || w % 2 === q[0]! % 2 ? [i] : []));
    const commit = new GroupCommit<number, number>({ take: odd, run: g.run });
    const results = [1, 2, 3, 4, 5, 6].map((n) => commit.submit(n));
    for (let i = 0; i < 3; i++) await g.release();
    assert.deepEqual(await Promise.all(results), [10, 20, 30, 40, 50, 60]);
    assert.deepEqual(g.statements, [[1], [2, 4, 6], [3, 5]]);
  });

  it("fails every queued write, rather than leaving them waiting, when the policy leaves the queue's first write behind", async () => {
    let runs = 0;
    const commit = new GroupCommit<number, number>({
      take: () => [1],
      run: async (writes) => {
        runs += 1;
        return [...writes];
      },
    });
    const outcomes = await Promise.allSettled([commit.submit(1), commit.submit(2)]);
    assert.equal(outcomes.length, 2);
    for (const o of outcomes) {
      assert.equal(o.status, "rejected");
      assert.match(String(o.reason), /must hold the queue's first write/);
    }
    assert.equal(runs, 0);
  });
});
