import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { PackedIds } from "../../src/migration/read/packed-ids.ts";
import { SourceIndex, type SourceState } from "../../src/migration/read/source-index.ts";

const states: SourceState[] = [
  { valid: false },
  { valid: true, userDisabled: false, adminDisabled: false },
  { valid: true, userDisabled: true, adminDisabled: false },
  { valid: true, userDisabled: false, adminDisabled: true },
  { valid: true, userDisabled: true, adminDisabled: true },
];

describe("SourceIndex", () => {
  it("answers exactly what a Map of the same ids answers, through many growths", () => {
    const index = new SourceIndex();
    const reference = new Map<string, SourceState>();
    for (let i = 0; i < 50_000; i++) {
      const id = i % 7 === 0 ? `legacy-${i}` : randomUUID();
      const state = states[i % states.length] as SourceState;
      index.set(id, state);
      reference.set(id, state);
    }
    assert.equal(index.size, reference.size);
    for (const [id, state] of reference) assert.deepEqual(index.get(id), state, id);
    for (let i = 0; i < 5_000; i++) assert.equal(index.get(randomUUID()), undefined);
  });

  it("keeps ids that differ only in case apart, as the database compares them", () => {
    const index = new SourceIndex();
    const lower = "6a591c0c-3e0f-4494-8559-5dc864060d39";
    index.set(lower, states[2] as SourceState);
    assert.equal(index.get(lower.toUpperCase()), undefined);
    index.set(lower.toUpperCase(), states[0] as SourceState);
    assert.deepEqual(index.get(lower), states[2]);
    assert.deepEqual(index.get(lower.toUpperCase()), { valid: false });
    assert.equal(index.get(` ${lower}`), undefined);
    assert.equal(index.size, 2);
  });

  it("replaces what it knew of an id when told again", () => {
    const index = new SourceIndex();
    const id = "00000000-0000-4000-8000-000000000001";
    index.set(id, { valid: false });
    index.set(id, { valid: true, userDisabled: false, adminDisabled: true });
    assert.deepEqual(index.get(id), { valid: true, userDisabled: false, adminDisabled: true });
    assert.equal(index.size, 1);
  });

  it("gives the valid candidates no page listed, whatever was looked up or listed before", () => {
    const index = new SourceIndex();
    const flagged = states[2] as SourceState;
    const ids = Array.from({ length: 3_000 }, (_, i) => (i % 9 === 0 ? `x-${i}` : randomUUID()));
    ids.forEach((id, i) => {
      index.set(
        id,
        i % 4 === 0 ? { valid: true, userDisabled: false, adminDisabled: false } : flagged,
      );
    });
    index.set("invalid-one", { valid: false });
    const listed = new Set(ids.filter((_, i) => i % 3 === 0));
    for (const id of listed) index.markListed(id);
    index.markListed(randomUUID()); // not held: ignored
    // Told again after being listed (a looked-up row): still listed.
    for (const id of listed) index.set(id, flagged);
    const unlisted = [...index.unlistedCandidates(100)];
    assert.ok(unlisted.every((batch) => batch.length <= 100));
    const expected = ids.filter((id, i) => i % 4 !== 0 && !listed.has(id)).sort();
    assert.deepEqual(unlisted.flat().sort(), expected);
  });

  it("holds 115,000 UUIDs in a table of at most 40 bytes each", () => {
    const index = new SourceIndex();
    for (let i = 0; i < 115_000; i++) index.set(randomUUID(), states[2] as SourceState);
    assert.ok(index.tableBytes <= 115_000 * 40, `${index.tableBytes} bytes`);
  });

  it("holds a reservation of 300,000 UUIDs in 23 bytes each, without growing while filled", () => {
    const index = new SourceIndex(300_000);
    index.reserve(300_000);
    const reserved = index.tableBytes;
    assert.ok(reserved <= 300_000 * 23, `${reserved} bytes`);
    const ids = Array.from({ length: 300_000 }, () => randomUUID());
    ids.forEach((id, i) => {
      index.set(id, states[i % states.length] as SourceState);
    });
    assert.equal(index.tableBytes, reserved);
    assert.equal(index.size, 300_000);
    for (let i = 0; i < ids.length; i += 997) {
      assert.deepEqual(index.get(ids[i] as string), states[i % states.length], ids[i]);
    }
    assert.equal(index.get(randomUUID()), undefined);
  });
});

describe("SourceIndex past its bound", () => {
  it("holds the first ids it is told of up to its bound, refuses the others, and says it is no longer complete", () => {
    const index = new SourceIndex(1_000);
    const ids = Array.from({ length: 1_500 }, (_, i) =>
      i % 10 === 0 ? `other-${i}` : randomUUID(),
    );
    const held = ids.map((id) => index.set(id, states[2] as SourceState));
    assert.deepEqual(held, [...Array(1_000).fill(true), ...Array(500).fill(false)]);
    assert.equal(index.size, 1_000);
    assert.equal(index.complete, false);
    assert.equal(index.refused, 500);
    for (const id of ids.slice(0, 1_000)) assert.deepEqual(index.get(id), states[2]);
    for (const id of ids.slice(1_000)) assert.equal(index.get(id), undefined);
  });

  it("still replaces what it knew of an id it holds once full, and keeps its listed mark", () => {
    const index = new SourceIndex(2);
    const [a, b] = [randomUUID(), randomUUID()];
    index.set(a, states[2] as SourceState);
    index.set(b, states[2] as SourceState);
    assert.equal(index.markListedOnce(a), true);
    assert.equal(index.set(a, states[3] as SourceState), true);
    assert.equal(index.complete, true);
    assert.deepEqual(index.get(a), states[3]);
    assert.equal(index.markListedOnce(a), false);
    assert.deepEqual([...index.unlistedCandidates(10)].flat(), [b]);
  });

  it("reserves no more than its bound, and grows no further while filled", () => {
    const index = new SourceIndex(20_000);
    index.reserve(1_000_000);
    const reserved = index.tableBytes;
    assert.ok(reserved <= 20_000 * 23, `${reserved} bytes`);
    for (let i = 0; i < 30_000; i++) index.set(randomUUID(), states[1] as SourceState);
    assert.equal(index.tableBytes, reserved);
    assert.equal(index.size, 20_000);
  });

  it("grows to its bound at most when it was reserved too little", () => {
    const index = new SourceIndex(5_000);
    index.reserve(100);
    const ids = Array.from({ length: 6_000 }, () => randomUUID());
    for (const id of ids) index.set(id, states[4] as SourceState);
    assert.equal(index.size, 5_000);
    assert.ok(index.tableBytes <= 5_000 * 23 * 1.01, `${index.tableBytes} bytes`);
    for (const id of ids.slice(0, 5_000)) assert.deepEqual(index.get(id), states[4]);
  });
});

describe("PackedIds", () => {
  it("gives back every id in order, UUIDs in 16 bytes and any other id verbatim", () => {
    const ids: string[] = [];
    for (let i = 0; i < 3_000; i++) {
      ids.push(
        i % 5 === 0 ? `Legacy-${i}` : i % 7 === 0 ? randomUUID().toUpperCase() : randomUUID(),
      );
    }
    ids.push("", "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff");
    const packed = new PackedIds();
    for (const id of ids) packed.push(id);
    assert.equal(packed.length, ids.length);
    assert.deepEqual(packed.toArray(), ids);
  });
});
