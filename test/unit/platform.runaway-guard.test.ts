import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PlatformError } from "../../src/platform/platform-error.ts";
import { type GuardedItem, RunawayGuard } from "../../src/platform/runaway-guard.ts";

const ENDPOINT = "GET /v2/identity/identities";
const T0 = Date.parse("2024-03-01T00:00:00.000Z");

/** Identity `i` of a listing where `perMs` identities share each millisecond. */
const item = (i: number, perMs = 1): GuardedItem => ({
  id: `id-${i}`,
  createdAt: new Date(T0 + Math.floor(i / perMs)).toISOString(),
});

/** Pages of `size` over `indexes`, in that order. */
function pages(indexes: number[], size: number, perMs = 1): GuardedItem[][] {
  const out: GuardedItem[][] = [];
  for (let at = 0; at < indexes.length; at += size) {
    out.push(indexes.slice(at, at + size).map((i) => item(i, perMs)));
  }
  return out;
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** Feeds the pages; the last one promises no more. */
function read(guard: RunawayGuard, all: GuardedItem[][]): void {
  all.forEach((page, n) => {
    guard.beforePage();
    guard.afterPage(page, n < all.length - 1);
  });
}

const stopped = (pattern: RegExp) => (err: unknown) => {
  assert.ok(err instanceof PlatformError, String(err));
  assert.equal(err.kind, "protocol");
  assert.equal(err.classification, "fatal");
  assert.match(err.message, pattern);
  return true;
};

describe("RunawayGuard", () => {
  it("reads a listing in created_at order to its end while remembering only one millisecond's ids", () => {
    for (const order of ["ASC", "DESC"] as const) {
      const guard = new RunawayGuard(ENDPOINT, 1000, undefined, order);
      const ids = order === "ASC" ? range(200_000) : range(200_000).reverse();
      let most = 0;
      for (const page of pages(ids, 1000, 3)) {
        guard.beforePage();
        guard.afterPage(page, true);
        most = Math.max(most, guard.remembered);
      }
      assert.ok(most <= 3, `${order}: held ${most} ids at once`);
    }
  });

  it("reads to the end a listing whose identities all share one millisecond across many pages", () => {
    const guard = new RunawayGuard(ENDPOINT, 100, undefined, "ASC");
    read(guard, pages(range(5_000), 100, 5_000));
    assert.equal(guard.remembered, 5_000);
  });

  it("stops on the second page when the platform serves the same page again with a new cursor", () => {
    for (const order of ["ASC", "DESC", undefined] as const) {
      const guard = new RunawayGuard(ENDPOINT, 10, undefined, order);
      const page = pages(range(10), 10)[0] as GuardedItem[];
      guard.afterPage(page, true);
      assert.throws(
        () => guard.afterPage(page, true),
        stopped(
          /^GET \/v2\/identity\/identities: page 2 brought no item that earlier pages had not already served/,
        ),
        String(order),
      );
    }
  });

  it("stops on the first page of a cycle's second round, however long the cycle", () => {
    const guard = new RunawayGuard(ENDPOINT, 1000, undefined, "ASC");
    const cycle = pages(range(50_000), 1000);
    for (const page of cycle) guard.afterPage(page, true);
    assert.throws(
      () => guard.afterPage(cycle[0] as GuardedItem[], true),
      stopped(
        /page 51 brought no item .*none past created_at 2024-03-01T00:00:49\.999Z in ASC order.*\(50000 distinct items read\)/,
      ),
    );
  });

  it("goes on when a page repeats some items of the page before it but brings new ones, counting each item once", () => {
    const guard = new RunawayGuard(ENDPOINT, 10, undefined, "ASC");
    const first = pages(range(10), 10)[0] as GuardedItem[];
    assert.doesNotThrow(() => guard.afterPage(first, true));
    assert.doesNotThrow(() =>
      guard.afterPage(pages(range(20).slice(5), 15)[0] as GuardedItem[], true),
    );
    assert.doesNotThrow(() =>
      guard.afterPage(pages(range(30).slice(20), 10)[0] as GuardedItem[], true),
    );
    // A page of nothing new stops it, and the message counts the items served: 30, not 35.
    assert.throws(
      () => guard.afterPage(first, true),
      stopped(/page 4 brought no item .*\(30 distinct items read\)/),
    );
  });

  it("stops when a whole page goes back behind what earlier pages reached, against the order asked", () => {
    const guard = new RunawayGuard(ENDPOINT, 10, undefined, "DESC");
    guard.afterPage(pages(range(100).reverse(), 10)[0] as GuardedItem[], true);
    assert.throws(
      () => guard.afterPage(pages(range(200).reverse(), 10)[0] as GuardedItem[], true),
      stopped(
        /page 2 brought no item .*none past created_at 2024-03-01T00:00:00\.090Z in DESC order/,
      ),
    );
  });

  it("remembers by id the items that carry no readable created_at", () => {
    const guard = new RunawayGuard(ENDPOINT, 10, undefined, "ASC");
    const undated = (i: number): GuardedItem => ({
      id: `u-${i}`,
      createdAt: i % 2 ? null : "soon",
    });
    guard.afterPage(range(10).map(undated), true);
    guard.afterPage(range(20).slice(10).map(undated), true);
    assert.equal(guard.remembered, 20);
    assert.throws(
      () => guard.afterPage(range(10).map(undated), true),
      stopped(/page 3 brought no item/),
    );
  });

  it("does not stop on a last page that brings nothing new, since it promises no more", () => {
    const guard = new RunawayGuard(ENDPOINT, 10, undefined, "ASC");
    const page = pages(range(10), 10)[0] as GuardedItem[];
    guard.afterPage(page, true);
    assert.doesNotThrow(() => guard.afterPage(page, false));
    // The same page promising more does stop it: the last page was let through for its promise.
    assert.throws(
      () => guard.afterPage(page, true),
      stopped(/page 3 brought no item .*\(10 distinct items read\)/),
    );
  });

  it("stops past twice the pages the expected total needs, plus ten", () => {
    const guard = new RunawayGuard(ENDPOINT, 10, 100, "ASC");
    assert.throws(
      () => read(guard, pages(range(1_000), 10)),
      stopped(/read 30 pages, more than twice the 10 that 100 expected items need plus ten/),
    );
  });
});
